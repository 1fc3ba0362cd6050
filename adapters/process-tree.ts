import { readdirSync, readFileSync } from 'node:fs';

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
  const all: Array<{ pid: number; ppid: number; pgid: number; sid: number; start: string }> = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // The command name (field 2) may hold spaces and parentheses: parse after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    all.push({ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), start: fields[19] ?? '' });
  }
  const tree = new Set<number>([root]);
  for (const p of all) if (p.sid === root || p.pgid === root) tree.add(p.pid);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  tree.delete(process.pid);
  return new Map(all.filter((p) => tree.has(p.pid)).map((p) => [p.pid, p.start]));
}

/** Start time of a live, non-zombie process, or undefined. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : (fields[19] ?? '');
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
