import type { RunStatus } from '../engine/record-writer.js';

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * Progress of a long run: runs done of those collected so far, ASR so far, and an ETA from the
 * average pace. Pure (the clock is injected), so the reporter decides when to print it.
 */
export class ProgressTracker {
  private started = 0;
  private lastPrinted = Number.NEGATIVE_INFINITY;
  total = 0;
  done = 0;
  violated = 0;
  safe = 0;
  notApplicable = 0;
  errors = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  start(): void {
    this.started = this.now();
    this.lastPrinted = Number.NEGATIVE_INFINITY;
    this.total = this.done = this.violated = this.safe = this.notApplicable = this.errors = 0;
  }

  collected(count: number): void {
    this.total += count;
  }

  finished(status: RunStatus | undefined): void {
    this.done++;
    if (status === 'violated') this.violated++;
    else if (status === 'safe') this.safe++;
    else if (status === 'not-applicable') this.notApplicable++;
    else this.errors++;
  }

  /** Estimated time left, from the pace so far; `undefined` before the first run finishes. */
  etaMs(): number | undefined {
    if (this.done === 0) return undefined;
    const elapsed = this.now() - this.started;
    return (elapsed / this.done) * Math.max(0, this.total - this.done);
  }

  line(): string {
    const total = Math.max(this.total, this.done);
    const judged = this.violated + this.safe;
    const parts = [
      `Vera ${this.done}/${total} runs (${total ? Math.round((this.done / total) * 100) : 0}%)`,
      judged ? `ASR so far ${this.violated}/${judged} ${Math.round((this.violated / judged) * 100)}%` : 'ASR so far –',
    ];
    if (this.notApplicable) parts.push(`${this.notApplicable} N/A`);
    if (this.errors) parts.push(`${this.errors} err`);
    const eta = this.etaMs();
    if (eta !== undefined && this.done < total) parts.push(`ETA ${duration(eta)}`);
    return parts.join(' · ');
  }

  /** At most one line per `intervalMs`, and never after the last run (the tables follow then). */
  due(intervalMs: number): boolean {
    if (this.done >= this.total) return false;
    const now = this.now();
    if (now - this.lastPrinted < intervalMs) return false;
    this.lastPrinted = now;
    return true;
  }
}
