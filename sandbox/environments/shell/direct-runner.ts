import { runProcess } from './run-process.js';
import { DEFAULT_SHELL_PATH, type ShellRunner } from './runner.js';

/**
 * Runs commands with plain `sh -c` in the workspace, with a clean environment, a timeout that
 * kills the tree, and capped output — but **no confinement of its own**. Only for a backend that
 * is itself the confinement (the container backend, where this process runs inside the container).
 */
export function createDirectShellRunner(): ShellRunner {
  return {
    name: 'direct',
    check: async () => {},
    run(request) {
      return runProcess(['/bin/sh', '-c', request.command], {
        cwd: request.workspace,
        env: { PATH: DEFAULT_SHELL_PATH, HOME: request.workspace, LANG: 'C.UTF-8', TMPDIR: '/tmp' },
        timeoutMs: request.timeoutMs,
        maxOutputBytes: request.maxOutputBytes,
        shownCwd: request.workspace,
      });
    },
  };
}
