import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { JsonObject } from '../../engine/json.js';
import {
  defineOperation,
  defineTool,
  ToolError,
  type EnvironmentDefinition,
  type OperationSpec,
  type ToolSpec,
} from '../environment.js';
import { resolveWorkspacePath, snapshotFiles, type FilesSnapshot } from './files/index.js';
import { createBubblewrapRunner, type ShellRunner } from './shell-runner.js';

/**
 * A shell in the run's workspace: `run_command` really runs `sh -c <command>` there. The
 * workspace is the same directory the `files` environment shows, so a command's changes are
 * visible to both. Commands run through a `ShellRunner`: by default bubblewrap, which confines
 * them to the workspace with no network (nothing can leave, so the environment has no external
 * channels); when confinement is not available, creating the environment fails with a message
 * that points to the container backend — commands never run unconfined on the host.
 */

export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 30;
export const MAX_COMMAND_TIMEOUT_SECONDS = 300;
/** Per stream (stdout, stderr). */
export const MAX_COMMAND_OUTPUT_BYTES = 64 * 1024;

export const shellCommandRecord = z.object({
  id: z.string(),
  command: z.string(),
  /** `null` when it was killed (timeout) or died of a signal. */
  exitCode: z.int().nullable(),
  timedOut: z.boolean(),
});
export type ShellCommandRecord = z.infer<typeof shellCommandRecord>;

export const shellConfig = z.object({
  /** Host directory of the workspace. Not part of the snapshot. */
  root: z.string(),
  defaultTimeoutSeconds: z.int().min(1).max(MAX_COMMAND_TIMEOUT_SECONDS).default(DEFAULT_COMMAND_TIMEOUT_SECONDS),
  commands: z.array(shellCommandRecord).default([]),
});

export interface ShellState extends z.infer<typeof shellConfig> {
  runner: ShellRunner;
}

/** What `snapshot()` returns: the workspace's files (as the files environment shows them) and the commands run. */
export interface ShellSnapshot extends JsonObject {
  files: FilesSnapshot['files'];
  commands: ShellCommandRecord[];
}

export interface ShellEnvironmentOptions {
  /** How commands run (default: bubblewrap). The container backend passes a direct runner. */
  runner?: ShellRunner;
}

const tool = <I extends z.ZodObject>(spec: ToolSpec<ShellState, I>) => defineTool(spec);
const operation = <I extends z.ZodObject>(spec: OperationSpec<ShellState, I>) => defineOperation(spec);

async function run(state: ShellState, command: string, timeoutSeconds: number) {
  return state.runner.run({ command, workspace: state.root, timeoutMs: timeoutSeconds * 1000, maxOutputBytes: MAX_COMMAND_OUTPUT_BYTES });
}

const shellTools: ToolSpec<ShellState>[] = [
  tool({
    name: 'run_command',
    description:
      'Run a shell command (sh -c) in the workspace directory and return its exit code and output. There is no network access; only the workspace can be written.',
    input: z.object({
      command: z.string().min(1).describe('The shell command line, e.g. "ls -la" or "sh scripts/test.sh"'),
      timeout_seconds: z
        .int()
        .min(1)
        .max(MAX_COMMAND_TIMEOUT_SECONDS)
        .optional()
        .describe(`Kill the command after this many seconds (default ${DEFAULT_COMMAND_TIMEOUT_SECONDS})`),
    }),
    async handler(state, args) {
      const result = await run(state, args.command, args.timeout_seconds ?? state.defaultTimeoutSeconds);
      const taken = new Set(state.commands.map((c) => c.id));
      let n = state.commands.length + 1;
      while (taken.has(`cmd-${n}`)) n++;
      state.commands.push({ id: `cmd-${n}`, command: args.command, exitCode: result.exitCode, timedOut: result.timedOut });
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

const shellOperations: OperationSpec<ShellState>[] = [
  operation({
    name: 'configure',
    description: 'Set the default command timeout.',
    input: z.object({
      timeout_seconds: z.int().min(1).max(MAX_COMMAND_TIMEOUT_SECONDS).optional().describe(`Default timeout per command (default ${DEFAULT_COMMAND_TIMEOUT_SECONDS})`),
    }),
    apply(state, args) {
      if (args.timeout_seconds !== undefined) state.defaultTimeoutSeconds = args.timeout_seconds;
    },
  }),
  operation({
    name: 'write',
    description: 'Create a workspace file (and its parent directories), optionally executable.',
    input: z.object({
      path: z.string().min(1).describe('Workspace path, e.g. /scripts/test.sh'),
      content: z.string().describe('Text content'),
      executable: z.boolean().optional().describe('Make it executable (default false)'),
    }),
    async apply(state, args) {
      const target = await resolveWorkspacePath(state.root, args.path);
      if (target.display === '/') throw new ToolError('is a directory: /');
      await mkdir(dirname(target.abs), { recursive: true });
      await writeFile(target.abs, args.content, 'utf8');
      if (args.executable) await chmod(target.abs, 0o755);
    },
  }),
  operation({
    name: 'run',
    description: 'Run a setup command in the workspace, confined like the agent\'s commands; a non-zero exit fails the init script.',
    input: z.object({
      command: z.string().min(1).describe('Shell command line'),
      timeout_seconds: z.int().min(1).max(MAX_COMMAND_TIMEOUT_SECONDS).optional().describe('Timeout (default: the configured one)'),
    }),
    async apply(state, args) {
      const result = await run(state, args.command, args.timeout_seconds ?? state.defaultTimeoutSeconds);
      if (result.exitCode !== 0) {
        const why = result.timedOut ? 'timed out' : `exit code ${result.exitCode ?? result.signal}`;
        throw new ToolError(`setup command failed (${why}): ${result.stderr.trim().slice(0, 500)}`);
      }
    },
  }),
];

/** A shell environment whose commands run through `options.runner` (default: bubblewrap). */
export function createShellEnvironment(options: ShellEnvironmentOptions = {}): EnvironmentDefinition<ShellState> {
  return {
    name: 'shell',
    description: 'A shell in the run workspace: commands really run there, confined (no network, nothing writable outside the workspace).',
    externalChannels: [],
    tools: shellTools,
    operations: shellOperations,
    async create(ctx) {
      const runner = options.runner ?? createBubblewrapRunner();
      // Fails the run before the agent starts, with a message that says what to do instead.
      await runner.check();
      await mkdir(ctx.workspace, { recursive: true });
      const state: ShellState = { ...shellConfig.parse({ root: ctx.workspace }), runner };
      return {
        state,
        snapshot: async (): Promise<ShellSnapshot> => ({
          files: (await snapshotFiles({ root: state.root, domains: [], shares: [] })).files,
          commands: state.commands.map((c) => ({ ...c })),
        }),
        // The workspace belongs to the sandbox, which removes it after the run.
        dispose: () => {},
      };
    },
  };
}

export const shellEnvironment = createShellEnvironment();
