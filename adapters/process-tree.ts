import { readdirSync, readFileSync } from 'node:fs';
import { parseProcStat, treeOf, type ProcessInfo } from '../sandbox/container/process-tree.js';

/**
 * The processes a program started, read from /proc (Linux): everything in its session or
 * process group, and every descendant by parent pid — also those that made themselves a new
 * session or group (OpenClaw's launcher respawns itself that way), which a process-group kill
 * would miss. Read before killing: once the root dies its children are re-parented and the link
 * is gone. Elsewhere (no /proc) only the root is returned.
 */
export function processTree(root: number): number[] {
  return [...processTreeWithStart(root).keys()];
}

/** `processTree`, with each process's start time (clock ticks since boot), so a reused PID is not mistaken for it. */
export function processTreeWithStart(root: number): Map<number, string> {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return new Map([[root, '']]);
  }
  const all: ProcessInfo[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      all.push(parseProcStat(Number(name), readFileSync(`/proc/${name}/stat`, 'utf8')));
    } catch {
      // gone meanwhile
    }
  }
  return new Map(treeOf(all, root).map((p) => [p.pid, p.start]));
}

/** Start time of a live, non-zombie process, or undefined. */
export function processStart(pid: number): string | undefined {
  try {
    const info = parseProcStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return info.state === 'Z' ? undefined : info.start;
  } catch {
    return undefined;
  }
}

/**
 * SIGKILLs a program's whole tree (see `processTree`) and its process group, plus `seen`:
 * processes observed in its tree earlier (pid → start time) that may have been orphaned since.
 */
export function killProcessTree(root: number | undefined, seen: ReadonlyMap<number, string> = new Map()): void {
  // A root that is gone (its PID may belong to someone else by now) is only reached through `seen`.
  const victims = new Set(root !== undefined ? processTree(root) : []);
  for (const [pid, start] of seen) if (pid !== process.pid && processStart(pid) === start) victims.add(pid);
  for (const pid of victims) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (root === undefined) return;
  try {
    process.kill(-root, 'SIGKILL');
  } catch {
    // no such group
  }
}
