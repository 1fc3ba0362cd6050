/**
 * Runs one command and measures it as a user's machine feels it: wall time, and the peak of the
 * summed RSS of its whole process tree (bench/peers/treepeak.mjs samples every 100 ms) — Vitest
 * runs its cases in worker processes or threads, which a single process's max RSS undercounts.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..');

export interface TreeMeasurement {
  wallS: number;
  peakMB: number;
  code: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

export function measureTree(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<TreeMeasurement> {
  return new Promise((done) => {
    const started = performance.now();
    // A bash parent that does not exec the command (another command follows): the sampler counts
    // its descendants, the command and everything it starts.
    const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const child = spawn('bash', ['-c', `${quoted}; exit $?`], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const sampler = spawn(process.execPath, [join(REPO, 'bench/peers/treepeak.mjs'), String(child.pid), '100'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let sample = '';
    sampler.stdout.on('data', (d: Buffer) => (sample += d.toString()));
    child.on('close', (code) => {
      const wallS = (performance.now() - started) / 1000;
      sampler.on('close', () => done({ wallS, peakMB: Number(/peak_tree_kb=(\d+)/.exec(sample)?.[1] ?? 0) / 1024, code, output }));
    });
  });
}
