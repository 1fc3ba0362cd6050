import { spawn as hostSpawn, type ChildProcess } from 'node:child_process';
import type { SandboxSpawnOptions } from '../sandbox/sandbox.js';
import { AgentError, type AgentStartContext } from './adapter.js';
import { interpreterRoot, programRoot } from '../sandbox/confinement/bubblewrap-program.js';
import { programEnv } from '../sandbox/confinement/program-env.js';
import { killProcessTree, processTreeWithStart } from './process-tree.js';

const STDERR_TAIL_BYTES = 4096;

/** How a CLI adapter starts programs: the sandbox's spawn, or (for hand-built contexts) the host's. */
export type SpawnFn = (command: string, args: string[], options?: SandboxSpawnOptions) => ChildProcess;

/**
 * The session's way to start programs: the sandbox's spawn, with what every program of the
 * session needs — the model endpoint it may reach (`network`) and its install folder
 * (`readOnly`) — added to each call. A hand-built context without a sandbox starts programs on
 * the host (unconfined, but still with only the environment they are given).
 */
export function spawnerOf(ctx: Pick<AgentStartContext, 'spawn' | 'workspace'>, session: Pick<SandboxSpawnOptions, 'network' | 'readOnly'> = {}): SpawnFn {
  const withSession = (options: SandboxSpawnOptions = {}): SandboxSpawnOptions => ({
    ...options,
    network: [...(session.network ?? []), ...(options.network ?? [])],
    readOnly: [...(session.readOnly ?? []), ...(options.readOnly ?? [])],
  });
  if (ctx.spawn) return (command, args, options) => ctx.spawn!(command, args, withSession(options));
  return (command, args, options = {}) =>
    hostSpawn(command, args, { cwd: options.cwd ?? ctx.workspace, env: programEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
}

/** The read-only folders a session's programs need (see `programRoot`), with their scripts' interpreters. */
export function programRoots(programs: string[]): string[] {
  return [...new Set(programs.flatMap((p) => [programRoot(p), interpreterRoot(p)]).filter((p): p is string => p !== undefined))];
}

/**
 * One running agent program: its stdout as lines, the tail of its stderr (for error details),
 * and a kill that takes its whole process group. Programs are started detached (their own
 * process group), so killing the group also ends the shells and helpers they started.
 */
export class AgentProcess {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = '';
  /** Characters ever written to stderr (the kept `stderr` is only its end): marks for `stderrSince`. */
  private stderrWritten = 0;
  private stdoutRest = '';
  private readonly lineListeners = new Set<(line: string) => void>();
  private spawnError: Error | undefined;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Every process seen in the program's tree (pid → start time), to end orphans after a crash. */
  private readonly seen = new Map<number, string>();
  private readonly watch: NodeJS.Timeout;

  constructor(
    readonly child: ChildProcess,
    /** Names the program in errors, e.g. `codex`. */
    readonly label: string,
  ) {
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.onStdout(chunk));
    child.stderr?.on('data', (chunk: string) => {
      this.stderrWritten += chunk.length;
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_BYTES * 2);
    });
    // A program that exits without reading its stdin makes writes fail with EPIPE: not our error.
    child.stdin?.on('error', () => {});
    // The tree is sampled while the program runs: when the program itself dies, its children
    // are re-parented and can no longer be found from it.
    this.watch = setInterval(() => this.sample(), 250);
    this.watch.unref();
    this.exited = new Promise((resolve) => {
      child.once('error', (error) => {
        this.spawnError = error;
        this.exitInfo ??= { code: null, signal: null };
        resolve(this.exitInfo);
      });
      child.once('close', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    void this.exited.then(() => clearInterval(this.watch));
  }

  private sample(): void {
    const pid = this.child.pid;
    if (pid === undefined || !this.running) return;
    for (const [p, start] of processTreeWithStart(pid)) this.seen.set(p, start);
  }

  /** Processes seen in the program's tree so far (for tests that check nothing is left). */
  get treeSeen(): ReadonlyMap<number, string> {
    this.sample();
    return this.seen;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** The last few KB of stderr, as an error's `detail`. */
  stderrTail(): string {
    const tail = this.stderr.length > STDERR_TAIL_BYTES ? this.stderr.slice(-STDERR_TAIL_BYTES) : this.stderr;
    // Colour codes make a tail unreadable in a test report.
    return tail.replace(/\u001b\[[0-9;]*m/g, '').trim();
  }

  /** Where stderr stands now, for `stderrSince` (a program that lives through several turns). */
  stderrMark(): number {
    return this.stderrWritten;
  }

  /** The tail of what was written to stderr after `mark` (as much of it as is kept). */
  stderrSince(mark: number): string {
    const fresh = this.stderrWritten - mark;
    if (fresh <= 0) return '';
    const text = fresh >= this.stderr.length ? this.stderr : this.stderr.slice(-fresh);
    return text.replace(/\u001b\[[0-9;]*m/g, '').trim();
  }

  /** How the program ended, once it has. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  /** Everything printed to stdout so far that did not end in a newline (e.g. a one-shot JSON answer). */
  get pendingStdout(): string {
    return this.stdoutRest;
  }

  onLine(listener: (line: string) => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  write(text: string): void {
    this.child.stdin?.write(text);
  }

  endInput(): void {
    this.child.stdin?.end();
  }

  /**
   * Ends a long-lived program: closes its input and lets it exit on its own for `graceMs` (it
   * flushes its session), then takes the whole tree either way.
   */
  async endGracefully(graceMs: number): Promise<void> {
    this.endInput();
    const exited = await Promise.race([this.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), graceMs).unref())]);
    this.kill();
    if (!exited) await this.exited;
  }

  /**
   * Kills the program's whole tree — its process group, its session and every descendant, also
   * those that left the group — then the child itself; safe to call more than once. With the
   * container backend the child is `docker exec` and the sandbox server ends the tree inside.
   */
  kill(): void {
    this.sample();
    killProcessTree(this.running ? this.child.pid : undefined, this.seen);
    try {
      this.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  /** The error describing an unexpected exit (crash, bad path), with the stderr tail as detail. */
  failure(what = 'exited'): AgentError {
    if (this.spawnError) {
      const code = (this.spawnError as NodeJS.ErrnoException).code;
      return new AgentError(
        `${this.label} could not be started: ${code === 'ENOENT' ? 'program not found' : this.spawnError.message}`,
        this.stderrTail() || this.spawnError.message,
      );
    }
    const info = this.exitInfo;
    const how = !info ? 'is still running' : info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    return new AgentError(`${this.label} ${what === 'exited' ? how : `${what} (${how})`}`, this.stderrTail());
  }

  /**
   * Resolves with `work` unless the program exits first (a crash: AgentError with the stderr
   * tail), the time limit passes (a hang: the tree is killed, AgentError with the stderr tail),
   * or `signal` aborts (the tree is killed, the abort reason is thrown).
   */
  async race<T>(work: Promise<T>, options: { signal: AbortSignal; timeoutMs: number; exitIsFailure?: boolean }): Promise<T> {
    const { signal, timeoutMs, exitIsFailure = true } = options;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stops: Array<Promise<never>> = [
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          this.kill();
          reject(
            new AgentError(`${this.label} did not finish its turn within ${Math.round(timeoutMs / 1000)}s; its process tree was killed`, this.stderrTail()),
          );
        }, timeoutMs);
        timer.unref();
      }),
      new Promise<never>((_, reject) => {
        onAbort = () => {
          this.kill();
          reject(signal.reason instanceof Error ? signal.reason : new AgentError(`${this.label} was stopped: ${String(signal.reason)}`, this.stderrTail()));
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
    ];
    if (exitIsFailure) {
      stops.push(
        this.exited.then(() => {
          // Let stdout listeners see the last lines before deciding the turn failed.
          return new Promise<never>((_, reject) => setImmediate(() => reject(this.failure())));
        }),
      );
    }
    try {
      return await Promise.race([work, ...stops]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private onStdout(chunk: string): void {
    this.stdoutRest += chunk;
    let at: number;
    while ((at = this.stdoutRest.indexOf('\n')) >= 0) {
      const line = this.stdoutRest.slice(0, at).replace(/\r$/, '');
      this.stdoutRest = this.stdoutRest.slice(at + 1);
      if (line.trim() === '') continue;
      for (const listener of this.lineListeners) listener(line);
    }
  }
}

/**
 * Starts `command` through `spawn` as an `AgentProcess`. It gets only the environment in
 * `options.env` (over the backend's minimal base): none of the test process's variables — no
 * API keys or cloud credentials, and none of the test runner's (OpenClaw prints nothing at all
 * when VITEST or NODE_ENV=test is set).
 */
export function startAgentProcess(spawn: SpawnFn, label: string, command: string, args: string[], options: SandboxSpawnOptions = {}): AgentProcess {
  return new AgentProcess(spawn(command, args, options), label);
}

/**
 * Runs a short helper program to completion (writing a config file, reading a transcript)
 * and returns its stdout; throws AgentError with its stderr when it fails.
 */
export async function runHelper(
  spawn: SpawnFn,
  label: string,
  command: string,
  args: string[],
  options: SandboxSpawnOptions & { input?: string; signal: AbortSignal; timeoutMs?: number },
): Promise<string> {
  const { input, signal, timeoutMs = 60_000, ...spawnOptions } = options;
  const proc = startAgentProcess(spawn, label, command, args, spawnOptions);
  let out = '';
  proc.child.stdout?.on('data', (chunk: string) => (out += chunk));
  if (input !== undefined) proc.write(input);
  proc.endInput();
  const { code, signal: killed } = await proc.race(proc.exited, { signal, timeoutMs, exitIsFailure: false });
  if (code !== 0 || killed) throw proc.failure();
  return out;
}

/** Kills every process in a list of agent processes; used by idempotent `close()`s. */
export function killAll(processes: Iterable<AgentProcess>): void {
  for (const p of processes) p.kill();
}

/**
 * The programs a session started, one per turn (Codex, OpenClaw, a command template): the last
 * one's stderr is the session's diagnostics, and closing ends them all.
 */
export class TurnProcesses {
  private readonly started: AgentProcess[] = [];

  add(proc: AgentProcess): AgentProcess {
    this.started.push(proc);
    return proc;
  }

  diagnostics(): string {
    return this.started.at(-1)?.stderrTail() ?? '';
  }

  async endAll(): Promise<void> {
    for (const proc of this.started) proc.kill();
    await Promise.all(this.started.map((proc) => proc.exited));
  }
}
