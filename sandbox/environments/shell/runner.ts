/**
 * How the shell environment runs a command. The in-process backend runs commands on the host, so
 * its runner must confine them (`createBubblewrapRunner`); a backend whose whole sandbox is
 * already confined — the container backend — runs them directly (`createDirectShellRunner`).
 * A runner that cannot confine says so in `check()`; it never falls back to running unconfined.
 */
export interface ShellRunner {
  /** `bubblewrap`, `direct`, … (shown in results and errors). */
  readonly name: string;
  /** Resolves when commands can run; rejects with a `ShellConfinementError` that says what to do when not. */
  check(): Promise<void>;
  run(request: ShellRunRequest): Promise<ShellRunResult>;
}

export interface ShellRunRequest {
  command: string;
  /** Host path of the run's workspace: the only place a command may write. */
  workspace: string;
  timeoutMs: number;
  /** Per stream; the rest of the output is dropped (and `truncated` set). */
  maxOutputBytes: number;
}

export interface ShellRunResult {
  /** The working directory as the command saw it (`/workspace` inside bubblewrap). */
  cwd: string;
  /** `null` when the command was killed (timeout) or died of a signal. */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
}

/** Shell commands cannot be confined here; the message tells the user what to do instead. */
export class ShellConfinementError extends Error {
  constructor(reason: string) {
    super(
      `the shell environment cannot confine commands on this machine: ${reason}. ` +
        'Vera never runs an agent\'s shell commands unconfined on the host. Install bubblewrap ' +
        '(Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, or run the case ' +
        "with the container backend (sandbox: 'container').",
    );
    this.name = 'ShellConfinementError';
  }
}

/** Where the workspace appears inside the bubblewrap sandbox. */
export const SANDBOX_WORKSPACE = '/workspace';
export const DEFAULT_SHELL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
