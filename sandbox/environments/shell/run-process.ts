import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import type { ShellRunResult } from './runner.js';

/** Process plumbing both runners share: spawn with capped output, and kill the whole tree on timeout. */

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
export function runProcess(
  argv: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; maxOutputBytes: number; shownCwd: string },
): Promise<ShellRunResult> {
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
