import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What one confined program tree (a CLI agent, or one bubblewrap shell command) may use: how many
 * processes at once, how much memory, how many CPU seconds each process, how large a file. A
 * hostile agent's fork bomb (6000 background processes were accepted) or allocation loop fails
 * that program, not the machine the tests run on.
 *
 * CPU time and file size are resource limits (`ulimit -t`, `-f`), enforced everywhere. The process
 * count and memory need a control group: the tree is put into a fresh cgroup — v2 (a child of this
 * process's own group, where its controllers are delegated) or v1 (the `pids` and `memory`
 * hierarchies, writable as root) — before bubblewrap starts, so every descendant inherits it. The
 * count cannot be an rlimit: RLIMIT_NPROC counts all processes of the user, and root ignores it.
 * Where no cgroup can be made (an unprivileged machine without delegation) only the rlimits hold,
 * and `enforced` says so. Closing the group kills whatever is left in it, then removes it.
 */
export interface ResourceLimits {
  /** Processes (and threads) alive at once in the tree. */
  processes: number;
  /** Memory of the whole tree, in MiB. */
  memoryMB: number;
  /** CPU seconds each process may use. */
  cpuSeconds: number;
  /** Largest file a process may write, in MiB. */
  fileSizeMB: number;
}

export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = { processes: 512, memoryMB: 4096, cpuSeconds: 900, fileSizeMB: 1024 };

/** Which limits hold for a group. */
export interface EnforcedLimits {
  processes: boolean;
  memory: boolean;
  cpuSeconds: true;
  fileSize: true;
}

let counter = 0;
const CGROUP_ROOT = '/sys/fs/cgroup';

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

/** This process's cgroup v2 path (`0::/x/y`), when the unified hierarchy is mounted. */
function ownV2Group(): string | undefined {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    if (!line || !existsSync(join(CGROUP_ROOT, 'cgroup.controllers'))) return undefined;
    return join(CGROUP_ROOT, line.slice(3));
  } catch {
    return undefined;
  }
}

function makeDir(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch {
    return false;
  }
}

export class LimitGroup {
  private constructor(
    readonly limits: ResourceLimits,
    /** The `cgroup.procs` files the tree's first process writes itself into. */
    private readonly procsFiles: string[],
    private readonly dirs: string[],
    readonly enforced: EnforcedLimits,
  ) {}

  /** A fresh group for one program tree, with as much of `limits` as this machine lets us enforce. */
  static create(limits: ResourceLimits = DEFAULT_RESOURCE_LIMITS): LimitGroup {
    const name = `vera-${process.pid}-${++counter}`;
    // cgroup v2: a child of our own group, where pids and memory are delegated.
    const own = ownV2Group();
    if (own) {
      const dir = join(own, name);
      if (makeDir(dir)) {
        const pids = tryWrite(join(dir, 'pids.max'), String(limits.processes));
        const memory = tryWrite(join(dir, 'memory.max'), String(limits.memoryMB * 1024 * 1024));
        if (pids || memory) return new LimitGroup(limits, [join(dir, 'cgroup.procs')], [dir], { processes: pids, memory, cpuSeconds: true, fileSize: true });
        tryRmdir(dir);
      }
    }
    // cgroup v1: the pids and memory hierarchies.
    const procs: string[] = [];
    const dirs: string[] = [];
    let pids = false;
    let memory = false;
    const pidsDir = join(CGROUP_ROOT, 'pids', name);
    if (makeDir(pidsDir)) {
      pids = tryWrite(join(pidsDir, 'pids.max'), String(limits.processes));
      if (pids) {
        procs.push(join(pidsDir, 'cgroup.procs'));
        dirs.push(pidsDir);
      } else tryRmdir(pidsDir);
    }
    const memoryDir = join(CGROUP_ROOT, 'memory', name);
    if (makeDir(memoryDir)) {
      memory = tryWrite(join(memoryDir, 'memory.limit_in_bytes'), String(limits.memoryMB * 1024 * 1024));
      // Without swap accounting the memsw file is absent: the limit then covers RAM only.
      tryWrite(join(memoryDir, 'memory.memsw.limit_in_bytes'), String(limits.memoryMB * 1024 * 1024));
      if (memory) {
        procs.push(join(memoryDir, 'cgroup.procs'));
        dirs.push(memoryDir);
      } else tryRmdir(memoryDir);
    }
    return new LimitGroup(limits, procs, dirs, { processes: pids, memory, cpuSeconds: true, fileSize: true });
  }

  /**
   * `argv` run under the limits: a `/bin/sh` on the host that puts itself into the group, sets
   * the rlimits and then becomes `argv` (exec), so the program and everything it starts inherit them.
   */
  wrap(argv: readonly string[]): string[] {
    const enter = this.procsFiles.map((f) => `echo $$ > ${shellQuote(f)} || exit 125`).join('; ');
    const script = `${enter ? `${enter}; ` : ''}ulimit -t ${this.limits.cpuSeconds} && ulimit -f ${this.limits.fileSizeMB * 2048} || exit 125; exec "$@"`;
    return ['/bin/sh', '-c', script, 'vera-limits', ...argv];
  }

  /** Kills every process still in the group, then removes it. Idempotent. */
  close(): void {
    for (const file of this.procsFiles) {
      let pids: string[] = [];
      try {
        pids = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      } catch {
        continue;
      }
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
    for (const dir of this.dirs) tryRmdir(dir, 50);
    this.dirs.length = 0;
  }
}

/** A cgroup can be removed once its last process has gone; the kernel takes a moment after SIGKILL. */
function tryRmdir(dir: string, attempts = 1): void {
  for (let i = 0; i < attempts; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      const until = Date.now() + 10;
      while (Date.now() < until) {
        // A short spin: close() runs at teardown, and an async wait would leave the group behind on exit.
      }
    }
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
