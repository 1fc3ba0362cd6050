import { spawn } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';

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

// ---------------------------------------------------------------------------------------------
// Process plumbing shared by both runners

async function descendants(root: number): Promise<number[]> {
  const parent = new Map<number, number>();
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    // Field 2 (the command name) may hold spaces and parentheses: parse after the last ')'.
    parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const [child, ppid] of parent) {
      if (ppid === pid && !out.includes(child)) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}

/** SIGKILLs the process group of `pid` (a live, unreaped child) and every descendant, also ones that left the group. */
export async function killTree(pid: number): Promise<void> {
  const victims = await descendants(pid);
  killGroup(pid);
  for (const v of [pid, ...victims]) {
    try {
      process.kill(v, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Collects at most `max` bytes, counting what it drops. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  dropped = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    const room = this.max - this.size;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(kept);
    this.size += kept.length;
    this.dropped += chunk.length - kept.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Spawns `argv` in its own process group with a clean environment, collects capped output, and
 * kills the whole tree when the timeout passes.
 */
function runProcess(argv: string[], options: { cwd: string; env: Record<string, string>; timeoutMs: number; maxOutputBytes: number; shownCwd: string }): Promise<ShellRunResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    let timedOut = false;
    let exited = false;
    child.on('exit', () => (exited = true));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid === undefined) return;
      // Until the child is reaped its pid is ours, so its descendants can be found by ppid;
      // afterwards only its process group is safe to signal.
      if (exited) killGroup(child.pid);
      else void killTree(child.pid);
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Leftovers still in the group after the shell itself exited (`sleep 99 &`) go too.
      if (child.pid !== undefined) killGroup(child.pid);
      resolve({
        cwd: options.shownCwd,
        exitCode: timedOut ? null : code,
        signal: signal ?? null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        truncated: stdout.dropped + stderr.dropped > 0,
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// bubblewrap

export interface BubblewrapRunnerOptions {
  /** Path or name of the bwrap binary (default `bwrap`, found on PATH). */
  bwrap?: string;
}

/** Read-only system paths a shell needs; symlinked ones (merged /usr) are recreated as symlinks. */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** From /etc only what programs need to start and to find their alternatives; no passwd, no shadow. */
const ETC_PATHS = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d'];

function systemMounts(): string[] {
  const args: string[] = [];
  for (const p of [...SYSTEM_PATHS, ...ETC_PATHS]) {
    let stat;
    try {
      stat = lstatSync(p);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(p), p);
    else args.push('--ro-bind', p, p);
  }
  return args;
}

/** The bwrap arguments that confine one command to `workspace`. */
export function bubblewrapArgs(workspace: string, command: string): string[] {
  return [
    // Root file system: read-only system directories, fresh /proc, /dev and /tmp, and the workspace.
    '--dir', '/etc',
    ...systemMounts(),
    '--proc', '/proc',
    '--dev', '/dev',
    '--tmpfs', '/tmp',
    '--bind', workspace, SANDBOX_WORKSPACE,
    '--chdir', SANDBOX_WORKSPACE,
    '--remount-ro', '/',
    // Namespaces: no network (only its own loopback), own pids, ipc, hostname.
    '--unshare-user-try', '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try',
    '--hostname', 'vera-sandbox',
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    '--clearenv',
    '--setenv', 'PATH', DEFAULT_SHELL_PATH,
    '--setenv', 'HOME', SANDBOX_WORKSPACE,
    '--setenv', 'LANG', 'C.UTF-8',
    '--setenv', 'TMPDIR', '/tmp',
    '--',
    '/bin/sh', '-c', command,
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
            result = await runProcess([bwrap, ...bubblewrapArgs(workspace, 'exit 0')], { cwd: '/', env, timeoutMs: 15_000, maxOutputBytes: 4096, shownCwd: SANDBOX_WORKSPACE });
          } catch (error) {
            const code = (error as { code?: string }).code;
            throw new ShellConfinementError(code === 'ENOENT' ? `bubblewrap (${bwrap}) is not installed` : `bubblewrap (${bwrap}) could not start: ${(error as Error).message}`);
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
      try {
        return await runProcess([bwrap, ...bubblewrapArgs(request.workspace, request.command)], {
          cwd: '/',
          env,
          timeoutMs: request.timeoutMs,
          maxOutputBytes: request.maxOutputBytes,
          shownCwd: SANDBOX_WORKSPACE,
        });
      } catch (error) {
        throw new ShellConfinementError(`bubblewrap (${bwrap}) failed: ${(error as Error).message}`);
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// direct

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
