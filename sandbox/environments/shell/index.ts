import { mkdir } from 'node:fs/promises';
import type { EnvironmentDefinition } from '../../environment.js';
import { snapshotFiles } from '../files/index.js';
import { createBubblewrapRunner } from './bubblewrap-runner.js';
import { shellOperations } from './operations.js';
import type { ShellRunner } from './runner.js';
import { shellConfig, type ShellSnapshot, type ShellState } from './state.js';
import { shellTools } from './tools.js';

/**
 * A shell in the run's workspace: `run_command` really runs `sh -c <command>` there. The
 * workspace is the same directory the `files` environment shows, so a command's changes are
 * visible to both. Commands run through a `ShellRunner`: by default bubblewrap, which confines
 * them to the workspace with no network (nothing can leave, so the environment has no external
 * channels); when confinement is not available, creating the environment fails with a message
 * that points to the container backend — commands never run unconfined on the host.
 */

export {
  DEFAULT_COMMAND_TIMEOUT_SECONDS,
  MAX_COMMAND_OUTPUT_BYTES,
  MAX_COMMAND_TIMEOUT_SECONDS,
  shellCommandRecord,
  shellConfig,
  type ShellCommandRecord,
  type ShellSnapshot,
  type ShellState,
} from './state.js';
export * from './runner.js';
export { bubblewrapArgs, createBubblewrapRunner, type BubblewrapRunnerOptions } from './bubblewrap-runner.js';
export { createDirectShellRunner } from './direct-runner.js';
export { killTree } from './run-process.js';

export interface ShellEnvironmentOptions {
  /** How commands run (default: bubblewrap). The container backend passes a direct runner. */
  runner?: ShellRunner;
}

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
