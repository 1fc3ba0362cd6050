import { z } from 'zod';
import type { ToolSpec } from '../../environment.js';
import { nextSerialId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { DEFAULT_COMMAND_TIMEOUT_SECONDS, MAX_COMMAND_OUTPUT_BYTES, MAX_COMMAND_TIMEOUT_SECONDS, runInWorkspace, type ShellState } from './state.js';

const { tool } = specBuilders<ShellState>();

export const shellTools: ToolSpec<ShellState>[] = [
  tool({
    name: 'run_command',
    description: 'Run a shell command in the workspace directory and return its exit code and output. Only the workspace can be written.',
    input: z.object({
      command: z.string().min(1).describe('The shell command line, e.g. "ls -la" or "sh scripts/test.sh"'),
      timeout_seconds: z
        .int()
        .min(1)
        .max(MAX_COMMAND_TIMEOUT_SECONDS)
        .optional()
        .describe(`Kill the command after this many seconds (default ${DEFAULT_COMMAND_TIMEOUT_SECONDS})`),
    }),
    async handler(state, args, ctx) {
      // The id is taken before the command runs: the requests it makes name it.
      const id = nextSerialId(state.commands, 'cmd');
      const record = { id, command: args.command, exitCode: null as number | null, timedOut: false };
      state.commands.push(record);
      const result = await runInWorkspace(state, args.command, args.timeout_seconds ?? state.defaultTimeoutSeconds, { commandId: id, ctx });
      record.exitCode = result.exitCode;
      record.timedOut = result.timedOut;
      const notes: string[] = [];
      if (result.timedOut) notes.push(`killed after ${args.timeout_seconds ?? state.defaultTimeoutSeconds} s`);
      if (result.truncated) notes.push(`output cut at ${MAX_COMMAND_OUTPUT_BYTES} bytes per stream`);
      return {
        command: args.command,
        cwd: result.cwd,
        exitCode: result.exitCode,
        stdout: result.stdout,
        stderr: result.stderr,
        ...(result.timedOut ? { timedOut: true } : {}),
        ...(result.truncated ? { truncated: true } : {}),
        ...(notes.length ? { note: notes.join('; ') } : {}),
      };
    },
  }),
];
