import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The directories a run makes on the host — its workspace, its programs' scratch `/tmp`, the
 * loopback bridge's sockets — are named after the process that owns them (`vera-<pid>-…`,
 * `vera-tmp-<pid>-…`, `vb-<pid>-…`), so that nothing outlives an interrupted run:
 * - while a process owns some, SIGINT, SIGTERM and SIGHUP (and the process's exit) remove them;
 * - Vitest's worker threads share the main process's pid and get no signals: the plugin removes
 *   the directories of its own pid when the main process exits (`removeScratchOf`);
 * - a process killed with SIGKILL cannot clean up: the next run removes directories whose owner
 *   is gone (`sweepStaleScratch`).
 */

const NAME = /^(?:vera-tmp-|vera-|vb-)(\d+)-/;
const EXIT_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** The name prefix of a scratch directory this process makes. */
export function scratchPrefix(kind: 'workspace' | 'tmp' | 'bridge', label = ''): string {
  const base = kind === 'workspace' ? 'vera-' : kind === 'tmp' ? 'vera-tmp-' : 'vb-';
  return `${base}${process.pid}-${label ? `${label}-` : ''}`;
}

const live = new Set<string>();

function removeLive(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

function onExitSignal(signal: NodeJS.Signals): void {
  removeLive();
  unhook();
  // Re-raise, so the process ends as it would have without this handler — unless another
  // handler is there to decide.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', removeLive);
  for (const signal of EXIT_SIGNALS) process.on(signal, onExitSignal);
}
function unhook(): void {
  if (!hooked) return;
  hooked = false;
  process.off('exit', removeLive);
  for (const signal of EXIT_SIGNALS) process.off(signal, onExitSignal);
}

/** A directory this process made and removes when it is interrupted (handlers only while it owns some). */
export function trackScratch(dir: string): void {
  live.add(dir);
  hook();
}

export function untrackScratch(dir: string): void {
  live.delete(dir);
  if (live.size === 0) unhook();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function scratchIn(root: string, owned: (pid: number) => boolean): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (m && owned(Number(m[1]))) out.push(join(root, name));
  }
  return out;
}

/** Removes the scratch directories under `roots` whose owning process is gone; returns them. */
export function sweepStaleScratch(roots: readonly string[]): string[] {
  const stale = [...new Set(roots)].flatMap((root) => scratchIn(root, (pid) => pid !== process.pid && !alive(pid)));
  for (const dir of stale) rmSync(dir, { recursive: true, force: true });
  return stale;
}

/**
 * Removes the half-written record files (`<record>.json.<pid>.<hex>.tmp`: a process killed between
 * writing the temp file and renaming it, SIGKILL or SIGINT at the wrong moment) in the run
 * directories under `recordDir` whose writer is gone; returns them. A record itself is never
 * touched: each is complete or absent.
 */
export function sweepStaleRecordTemps(recordDir: string): string[] {
  const stale: string[] = [];
  let runs: string[];
  try {
    runs = readdirSync(recordDir);
  } catch {
    return stale;
  }
  for (const run of runs) {
    let names: string[];
    try {
      names = readdirSync(join(recordDir, run));
    } catch {
      continue;
    }
    for (const name of names) {
      const m = /\.json\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
      if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) stale.push(join(recordDir, run, name));
    }
  }
  for (const file of stale) rmSync(file, { force: true });
  return stale;
}

/** Removes every scratch directory of process `pid` under `roots` (for the main process of worker threads). */
export function removeScratchOf(pid: number, roots: readonly string[]): void {
  for (const dir of [...new Set(roots)].flatMap((root) => scratchIn(root, (p) => p === pid))) rmSync(dir, { recursive: true, force: true });
}

/** Where scratch directories go besides the workspace root: the bridge's sockets live in the OS temp directory. */
export function scratchRoots(workspaceRoot: string): string[] {
  return [workspaceRoot, tmpdir()];
}

let mainHooked = false;
/**
 * For the process that runs Vitest: worker threads make their directories under this pid and
 * cannot react to signals, so this process removes them when it exits or is interrupted; and
 * what dead processes left is removed now.
 */
export function installMainProcessCleanup(workspaceRoot: string): void {
  const roots = scratchRoots(workspaceRoot);
  sweepStaleScratch(roots);
  if (mainHooked) return;
  mainHooked = true;
  const cleanup = () => removeScratchOf(process.pid, roots);
  process.on('exit', cleanup);
  for (const signal of EXIT_SIGNALS) {
    const onSignal = () => {
      cleanup();
      process.off(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}
