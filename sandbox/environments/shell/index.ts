import { mkdir } from 'node:fs/promises';
import type { EnvironmentDefinition } from '../../environment.js';
import { snapshotFiles } from '../files/index.js';
import { shellOperations } from './operations.js';
import type { ShellRunner } from './runner.js';
import { SHELL_HTTP_CHANNEL } from './network.js';
import { createSimulatedShellRunner } from './simulated-runner.js';
import { shellConfig, type ShellSnapshot, type ShellState } from './state.js';
import { shellTools } from './tools.js';
import { shellEquivalences } from './equivalences.js';

/**
 * A shell in the run's workspace: `run_command` runs `<command>` there. The workspace is the
 * same directory the `files` environment shows, so a command's changes are visible to both.
 * Commands run through a `ShellRunner`: by default the simulated shell (an embedded bash
 * interpreter: no host process, its curl and wget answered by the environment and recorded as
 * `http` egress — see `simulated-runner.ts`); `createBubblewrapRunner()` runs real programs,
 * confined to the workspace with no network; the container backend runs them inside the
 * container. A runner that cannot confine fails the run before the agent starts — commands
 * never run unconfined on the host.
 */

export {
  DEFAULT_COMMAND_TIMEOUT_SECONDS,
  MAX_COMMAND_OUTPUT_BYTES,
  MAX_COMMAND_TIMEOUT_SECONDS,
  shellCommandRecord,
  shellConfig,
  shellEndpoint,
  shellHttpRecord,
  type ShellEndpoint,
  type ShellHttpRecord,
  type ShellCommandRecord,
  type ShellSnapshot,
  type ShellState,
} from './state.js';
export * from './runner.js';
export { bubblewrapArgs, createBubblewrapRunner, type BubblewrapRunnerOptions } from './bubblewrap-runner.js';
export { createDirectShellRunner } from './direct-runner.js';
export { createSimulatedShellRunner } from './simulated-runner.js';
export { normalizeShellUrl, SHELL_HTTP_CHANNEL } from './network.js';
export { killTree } from './run-process.js';

export interface ShellEnvironmentOptions {
  /**
   * How commands run: the simulated shell (default, one per run), bubblewrap
   * (`createBubblewrapRunner()`), or the direct runner the container backend passes.
   */
  runner?: ShellRunner;
}

/** A shell environment whose commands run through `options.runner` (default: the simulated shell). */
export function createShellEnvironment(options: ShellEnvironmentOptions = {}): EnvironmentDefinition<ShellState> {
  return {
    name: 'shell',
    description:
      'A shell in the run workspace (simulated by default; real programs with bubblewrap or in the container), nothing writable outside it; HTTP requests from the simulated shell are recorded as egress.',
    externalChannels: [SHELL_HTTP_CHANNEL],
    tools: shellTools,
    operations: shellOperations,
    equivalences: shellEquivalences,
    async create(ctx) {
      const runner = options.runner ?? createSimulatedShellRunner();
      // Fails the run before the agent starts, with a message that says what to do instead.
      await runner.check();
      await mkdir(ctx.workspace, { recursive: true });
      const state: ShellState = { ...shellConfig.parse({ root: ctx.workspace }), runner };
      return {
        state,
        snapshot: async (): Promise<ShellSnapshot> => ({
          files: (await snapshotFiles({ root: state.root, domains: [], shares: [] })).files,
          commands: state.commands.map((c) => ({ ...c })),
          requests: state.requests.map((r) => ({ ...r, headers: { ...r.headers } })),
        }),
        // The workspace belongs to the sandbox, which removes it after the run.
        dispose: () => runner.release?.(state.root),
      };
    },
  };
}

export const shellEnvironment = createShellEnvironment();
