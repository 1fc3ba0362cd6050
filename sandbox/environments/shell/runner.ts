import { VeraError } from '../../../engine/errors.js';

/**
 * How the shell environment runs a command. The in-process backend's default is the simulated
 * shell (`createSimulatedShellRunner`: an embedded bash interpreter over the workspace, no host
 * process at all, its network simulated and recorded); `createBubblewrapRunner` runs real
 * programs on the host, confined to the workspace; a backend whose whole sandbox is already
 * confined — the container backend — runs them directly (`createDirectShellRunner`). A runner
 * that cannot confine says so in `check()`; it never falls back to running unconfined.
 */
export interface ShellRunner {
  /** `bubblewrap`, `direct`, … (shown in results and errors). */
  readonly name: string;
  /** Resolves when commands can run; rejects with a `ShellConfinementError` that says what to do when not. */
  check(): Promise<void>;
  run(request: ShellRunRequest): Promise<ShellRunResult>;
  /** Forgets what the runner keeps for a workspace (the simulated shell's file system view). */
  release?(workspace: string): void;
}

export interface ShellRunRequest {
  command: string;
  /** Host path of the run's workspace: the only place a command may write. */
  workspace: string;
  timeoutMs: number;
  /** Per stream; the rest of the output is dropped (and `truncated` set). */
  maxOutputBytes: number;
  /**
   * Where the command's HTTP requests go, for runners that simulate the network (the simulated
   * shell's curl and wget): the environment records each one and answers it; nothing leaves.
   * Runners that run real programs have no network at all (bubblewrap) and ignore it.
   */
  network?: ShellNetwork;
}

export interface ShellHttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface ShellHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Answers one HTTP request a command made; throws (a message the command prints) when it cannot. */
export type ShellNetwork = (request: ShellHttpRequest) => ShellHttpResponse;

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
export class ShellConfinementError extends VeraError {
  constructor(reason: string) {
    super(
      'CONFINEMENT_UNAVAILABLE',
      `the shell environment cannot confine commands on this machine: ${reason}. ` +
        "Vera never runs an agent's shell commands unconfined on the host. Install bubblewrap " +
        '(Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, use the simulated ' +
        "shell (shell: 'simulated', the default: no host processes), or run the case with the container " +
        "backend (sandbox: 'container').",
    );
    this.name = 'ShellConfinementError';
  }
}

/** Where the workspace appears to commands (inside bubblewrap and the simulated shell). */
export const SANDBOX_WORKSPACE = '/workspace';
export const DEFAULT_SHELL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
