import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { writeText } from '../files/index.js';
import { specBuilders } from '../shared/spec-builders.js';
import { normalizeShellUrl } from './network.js';
import { DEFAULT_COMMAND_TIMEOUT_SECONDS, MAX_COMMAND_TIMEOUT_SECONDS, runInWorkspace, shellHttpMethod, type ShellState } from './state.js';

const { operation } = specBuilders<ShellState>();

/** Init-script operations: the default timeout, workspace files (executable or not), setup commands, answers for the simulated network. */
export const shellOperations: OperationSpec<ShellState>[] = [
  operation({
    name: 'configure',
    description: 'Set the default command timeout.',
    input: z.object({
      timeout_seconds: z
        .int()
        .min(1)
        .max(MAX_COMMAND_TIMEOUT_SECONDS)
        .optional()
        .describe(`Default timeout per command (default ${DEFAULT_COMMAND_TIMEOUT_SECONDS})`),
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
      // Through the files environment's writer: confined to the workspace, symlinks flipped meanwhile or not.
      writeText(state.root, args.path, args.content, 'write', { executable: args.executable ?? false });
    },
  }),
  operation({
    name: 'run',
    description: "Run a setup command in the workspace, confined like the agent's commands; a non-zero exit fails the init script.",
    input: z.object({
      command: z.string().min(1).describe('Shell command line'),
      timeout_seconds: z.int().min(1).max(MAX_COMMAND_TIMEOUT_SECONDS).optional().describe('Timeout (default: the configured one)'),
    }),
    async apply(state, args) {
      // Setup traffic is not the agent's: recorded as state, never reported as egress.
      const result = await runInWorkspace(state, args.command, args.timeout_seconds ?? state.defaultTimeoutSeconds, { commandId: 'init' });
      if (result.exitCode !== 0) {
        const why = result.timedOut ? 'timed out' : `exit code ${result.exitCode ?? result.signal}`;
        throw new ToolError(`setup command failed (${why}): ${result.stderr.trim().slice(0, 500)}`);
      }
    },
  }),
  operation({
    name: 'serve',
    description: "Seed the simulated shell's answer to curl/wget requests for a URL (other URLs get an empty 200).",
    input: z.object({
      url: z.string().describe('Absolute http(s) URL, e.g. https://get.tool.example/install.sh'),
      method: z
        .union([shellHttpMethod, z.literal('ANY')])
        .optional()
        .describe('Method it answers (default ANY)'),
      status: z.int().min(100).max(599).optional().describe('Status code (default 200)'),
      body: z.string().optional().describe('Response body (default empty)'),
    }),
    apply(state, args) {
      let url: string;
      try {
        url = normalizeShellUrl(args.url);
      } catch {
        throw new ToolError(`not a URL: ${JSON.stringify(args.url)}`);
      }
      state.endpoints.push({ url, method: args.method ?? 'ANY', status: args.status ?? 200, body: args.body ?? '' });
    },
  }),
];
