import { tmpdir } from 'node:os';
import { DEFAULT_RESOURCE_LIMITS, LimitGroup, type ResourceLimits } from '../../confinement/resource-limits.js';
import { isolationArgs, systemMounts } from '../../confinement/system-mounts.js';
import { runProcess } from './run-process.js';
import { DEFAULT_SHELL_PATH, SANDBOX_WORKSPACE, ShellConfinementError, type ShellRunner, type ShellRunResult } from './runner.js';

export interface BubblewrapRunnerOptions {
  /** Path or name of the bwrap binary (default `bwrap`, found on PATH). */
  bwrap?: string;
  /** What each command (and everything it starts) may use; default `DEFAULT_RESOURCE_LIMITS`. */
  limits?: Partial<ResourceLimits>;
}

/** The bwrap arguments that confine one command to `workspace`. */
export function bubblewrapArgs(workspace: string, command: string): string[] {
  return [
    // Root file system: read-only system directories, fresh /proc, /dev and /tmp, and the workspace.
    '--dir',
    '/etc',
    ...systemMounts('shell'),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    workspace,
    SANDBOX_WORKSPACE,
    '--chdir',
    SANDBOX_WORKSPACE,
    '--remount-ro',
    '/',
    ...isolationArgs(),
    '--clearenv',
    '--setenv',
    'PATH',
    DEFAULT_SHELL_PATH,
    '--setenv',
    'HOME',
    SANDBOX_WORKSPACE,
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--setenv',
    'TMPDIR',
    '/tmp',
    '--',
    '/bin/sh',
    '-c',
    command,
  ];
}

const probes = new Map<string, Promise<void>>();

/**
 * Runs every command in a bubblewrap sandbox: the workspace (at `/workspace`) is the only
 * writable host path, system directories are read-only, there is no network, and the command
 * gets its own pid, ipc and uts namespaces, no capabilities and a clean environment.
 */
export function createBubblewrapRunner(options: BubblewrapRunnerOptions = {}): ShellRunner {
  const bwrap = options.bwrap ?? 'bwrap';
  const env = { PATH: process.env.PATH ?? DEFAULT_SHELL_PATH };
  return {
    name: 'bubblewrap',
    check() {
      let probe = probes.get(bwrap);
      if (!probe) {
        probe = (async () => {
          // Any existing directory will do: the probe command only exits.
          const workspace = tmpdir();
          let result: ShellRunResult;
          try {
            result = await runProcess([bwrap, ...bubblewrapArgs(workspace, 'exit 0')], {
              cwd: '/',
              env,
              timeoutMs: 15_000,
              maxOutputBytes: 4096,
              shownCwd: SANDBOX_WORKSPACE,
            });
          } catch (error) {
            const code = (error as { code?: string }).code;
            throw new ShellConfinementError(
              code === 'ENOENT' ? `bubblewrap (${bwrap}) is not installed` : `bubblewrap (${bwrap}) could not start: ${(error as Error).message}`,
            );
          }
          if (result.exitCode !== 0) {
            const why = result.stderr.trim().split('\n')[0] || `exit code ${result.exitCode ?? result.signal}`;
            throw new ShellConfinementError(`bubblewrap (${bwrap}) cannot create its sandbox here (${why})`);
          }
        })();
        probes.set(bwrap, probe);
        // A failed probe is not cached: installing bubblewrap mid-session should work.
        probe.catch(() => probes.delete(bwrap));
      }
      return probe;
    },
    async run(request) {
      await this.check();
      // Each command in a limit group of its own: a fork bomb or an allocation loop fails the command, not the machine.
      const group = LimitGroup.create({ ...DEFAULT_RESOURCE_LIMITS, ...options.limits });
      try {
        return await runProcess(group.wrap([bwrap, ...bubblewrapArgs(request.workspace, request.command)]), {
          cwd: '/',
          env,
          timeoutMs: request.timeoutMs,
          maxOutputBytes: request.maxOutputBytes,
          shownCwd: SANDBOX_WORKSPACE,
        });
      } catch (error) {
        throw new ShellConfinementError(`bubblewrap (${bwrap}) failed: ${(error as Error).message}`);
      } finally {
        group.close();
      }
    },
  };
}
