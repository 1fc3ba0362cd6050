import type { ContainerInstance } from './container-instance.js';

/**
 * Keeps up to `size` started sandbox containers between cases: a released container is reset
 * (its environments disposed, its workspace removed, every process but its server killed) and
 * handed to the next case instead of starting a new one. A container that fails its reset, or
 * that died, is removed. Size 0: every case gets a fresh container, removed after it.
 */
export class ContainerPool {
  private readonly idle: ContainerInstance[] = [];
  private readonly resets: number[] = [];
  private closed = false;

  constructor(
    readonly size: number,
    private readonly create: () => Promise<ContainerInstance>,
  ) {}

  /** An idle live container, or a new one. */
  async acquire(): Promise<ContainerInstance> {
    for (let c = this.idle.pop(); c; c = this.idle.pop()) {
      if (c.alive) return c;
      void c.stop();
    }
    return this.create();
  }

  /** Returns a container after its case: reset into the pool, or stopped and removed. */
  async release(container: ContainerInstance): Promise<void> {
    if (this.closed || this.size === 0 || !container.alive || this.idle.length >= this.size) return container.stop();
    try {
      const started = performance.now();
      await container.reset();
      // Kept for `resetDurations` (the benchmark's p99), bounded.
      if (this.resets.length < 100_000) this.resets.push(performance.now() - started);
    } catch {
      return container.stop();
    }
    // The pool may have filled or closed while the reset ran.
    if (this.closed || this.idle.length >= this.size) return container.stop();
    this.idle.push(container);
  }

  /** Starts containers until `size` are idle (a warm pool before the first case). */
  async warm(): Promise<void> {
    const missing = Math.max(0, this.size - this.idle.length);
    const started = await Promise.allSettled(Array.from({ length: missing }, () => this.create()));
    for (const result of started) {
      if (result.status === 'fulfilled') {
        if (this.closed) void result.value.stop();
        else this.idle.push(result.value);
      }
    }
    const failed = started.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) throw failed.reason;
  }

  /** How long each successful reset took, ms (between one case and the next on a container). */
  get resetDurations(): readonly number[] {
    return this.resets;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  /** Stops every idle container; later releases stop theirs. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const idle = this.idle.splice(0);
    await Promise.allSettled(idle.map((c) => c.stop()));
  }
}
