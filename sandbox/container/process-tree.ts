import { readdir, readFile } from 'node:fs/promises';

/**
 * Process bookkeeping inside the sandbox container, read from /proc. Used to end what a
 * `spawn()`ed program left behind (its whole tree, also children that were re-parented after
 * it exited, which keep its session and process group), and on reset of a pooled container.
 */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Start time (clock ticks since boot), so a reused PID is not mistaken for the process seen earlier. */
  start: string;
}

/** One line of `/proc/<pid>/stat`, read (also used on the host: adapters/process-tree.ts). */
export function parseProcStat(pid: number, stat: string): ProcessInfo & { state: string } {
  // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state: fields[0] ?? '', ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), start: fields[19] ?? '' };
}

export async function listProcesses(): Promise<ProcessInfo[]> {
  const out: ProcessInfo[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue; // gone meanwhile
    out.push(parseProcStat(Number(name), stat));
  }
  return out;
}

function kill(pids: Iterable<number>): number {
  let n = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
      n++;
    } catch {
      // Already gone.
    }
  }
  return n;
}

/** `root`, its descendants, and everything in its session or process group (never this process). */
export function treeOf(all: readonly ProcessInfo[], root: number): ProcessInfo[] {
  const victims = new Set<number>();
  for (const p of all) if (p.pid === root || p.sid === root || p.pgid === root) victims.add(p.pid);
  // Descendants that started their own session or group are still children by ppid.
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (!victims.has(p.pid) && victims.has(p.ppid)) {
        victims.add(p.pid);
        grew = true;
      }
    }
  }
  victims.delete(process.pid);
  return all.filter((p) => victims.has(p.pid));
}

/**
 * Kills `root`'s tree (see `treeOf`) and `seen`: processes observed in it earlier (pid → start
 * time) that may have left it since — a child in its own session whose parent died is
 * re-parented to init and found no other way. Returns how many were signalled.
 */
export async function killProcessTree(root: number, seen: ReadonlyMap<number, string> = new Map()): Promise<number> {
  const all = await listProcesses();
  const victims = new Set(treeOf(all, root).map((p) => p.pid));
  for (const p of all) if (p.pid !== process.pid && p.pid !== 1 && seen.get(p.pid) === p.start) victims.add(p.pid);
  return kill(victims);
}

/**
 * Kills every process of the PID namespace except this one and its ancestors (the container's
 * init), and `spare` (the exec-stream relay, which the host needs for the next case). Only ever
 * called when the server knows it runs in its own container.
 */
export async function killOtherProcesses(spare: readonly number[] = []): Promise<number> {
  const all = await listProcesses();
  const byPid = new Map(all.map((p) => [p.pid, p]));
  const keep = new Set<number>(spare);
  for (let pid: number | undefined = process.pid; pid && !keep.has(pid); pid = byPid.get(pid)?.ppid) keep.add(pid);
  return kill(all.filter((p) => !keep.has(p.pid) && p.pid !== 1).map((p) => p.pid));
}
