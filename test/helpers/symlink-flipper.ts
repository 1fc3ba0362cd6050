import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * A separate process that flips symlinks in a workspace while tools run (what a CLI agent with its
 * own shell, or a helper it starts, can do): the races the workspace layer must survive are real.
 */

const flippers: Flipper[] = [];

/** Stops every flipper started so far (call it in afterEach, before removing their directories). */
export async function stopFlippers(): Promise<void> {
  await Promise.all(flippers.splice(0).map((f) => f.stop()));
}

/** A node process running `script` (a tight loop) until stopped; it prints `ready` first. */
export class Flipper {
  private constructor(private readonly child: ChildProcess) {}

  static async start(script: string, args: string[]): Promise<Flipper> {
    return Flipper.startProgram(process.execPath, ['-e', script, ...args]);
  }

  /** Any program that prints a line when it is ready and then loops. */
  static async startProgram(command: string, args: string[]): Promise<Flipper> {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const flipper = new Flipper(child);
    flippers.push(flipper);
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`flipper exited with ${code}`)));
      child.stdout!.once('data', () => resolve());
    });
    return flipper;
  }

  /** Stops it where it is (SIGSTOP), and waits until the kernel says it is stopped. */
  async pause(): Promise<void> {
    this.child.kill('SIGSTOP');
    while (!/^\d+ \(.*\) T/.test(readFileSync(`/proc/${this.child.pid}/stat`, 'utf8'))) await new Promise((r) => setImmediate(r));
  }

  resume(): void {
    this.child.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** Flips `link` between two targets by renaming a fresh symlink onto it: atomic, so `link` always exists. */
export const SWAP_LINK = `
const fs = require('node:fs');
const [link, a, b] = process.argv.slice(1);
const tmp = link + '.next';
process.stdout.write('ready\\n');
for (let i = 0; ; i++) {
  try { fs.unlinkSync(tmp); } catch {}
  fs.symlinkSync(i % 2 ? a : b, tmp);
  fs.renameSync(tmp, link);
}`;

/**
 * Exchanges the directory `dir` and the symlink `link` atomically (renameat2 RENAME_EXCHANGE, Linux),
 * over and over: `dir` is always there, now a directory, now a link out — a component swapped for a
 * symlink between a check and a use. Python's ctypes calls the syscall (no compiler needed).
 */
export const EXCHANGE_DIR = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print('ready', flush=True)
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit('renameat2: errno %d' % ctypes.get_errno())
`;

export function startExchange(dir: string, link: string): Promise<Flipper> {
  return Flipper.startProgram('python3', ['-c', EXCHANGE_DIR, dir, link]);
}
