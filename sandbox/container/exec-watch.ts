import { readdir, readFile, rm } from 'node:fs/promises';
import { EXEC_PID_DIR } from './protocol.js';
import { killProcessTree, listProcesses, treeOf } from './process-tree.js';

/**
 * Watches the programs the host started with `spawn()` (`docker exec`; each records its PID in
 * EXEC_PID_DIR) and remembers every process seen in each one's tree while it ran. When the host
 * asks to end a program (its `docker exec` client exited: a crash, a timeout, a close), the
 * tree is gone from view if the program died first: a child that made its own session (Claude
 * Code's and Codex's shell commands do) is then re-parented to init. What was seen is killed
 * too — the in-container twin of the host's `AgentProcess` sampling.
 */
export class ExecWatch {
  private readonly seen = new Map<string, Map<number, string>>();
  private readonly timer: NodeJS.Timeout;
  private sampling: Promise<void> | undefined;

  constructor(
    private readonly dir = EXEC_PID_DIR,
    intervalMs = 250,
  ) {
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  /** Records the current tree of every program with a PID file. */
  sample(): Promise<void> {
    this.sampling ??= (async () => {
      try {
        const ids = (await readdir(this.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.pid')).map((n) => n.slice(0, -4));
        if (ids.length === 0) return;
        const all = await listProcesses();
        for (const id of ids) {
          const pid = await this.pidOf(id);
          if (pid === undefined) continue;
          const seen = this.seen.get(id) ?? new Map<number, string>();
          for (const p of treeOf(all, pid)) seen.set(p.pid, p.start);
          this.seen.set(id, seen);
        }
      } finally {
        this.sampling = undefined;
      }
    })();
    return this.sampling;
  }

  /** Kills program `id`'s tree and whatever was seen in it; forgets it. Returns how many were signalled. */
  async kill(id: string): Promise<number> {
    await this.sampling; // a sample in flight must not re-add what is forgotten here
    const pid = await this.pidOf(id);
    const seen = this.seen.get(id) ?? new Map<number, string>();
    this.seen.delete(id);
    if (pid === undefined) return 0;
    await rm(`${this.dir}/${id}.pid`, { force: true });
    return killProcessTree(pid, seen);
  }

  /** Forgets everything (reset: every process of the container is ended anyway). */
  clear(): void {
    this.seen.clear();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async pidOf(id: string): Promise<number | undefined> {
    const text = await readFile(`${this.dir}/${id}.pid`, 'utf8').catch(() => undefined);
    const pid = Number(text?.trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  }
}
