import type { RunStatus } from '../engine/record-writer.js';

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * Progress of a long run: runs done of the total, ASR so far, and an ETA from the average pace.
 * Vitest collects test files as it goes, so the total grows until every file is collected: until
 * then the line says how many runs are known so far and gives no percentage or ETA (a percentage
 * of a growing total would go backwards). Pure (the clock is injected), so the reporter decides
 * when to print it.
 */
export class ProgressTracker {
  private started = 0;
  private lastPrinted = Number.NEGATIVE_INFINITY;
  total = 0;
  done = 0;
  /** Test files the run will collect (undefined: not known, the total is taken as it is). */
  private files: number | undefined;
  private filesCollected = 0;
  violated = 0;
  safe = 0;
  notApplicable = 0;
  errors = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A new run of `files` test files (undefined when the reporter was not told). */
  start(files?: number): void {
    this.started = this.now();
    this.lastPrinted = Number.NEGATIVE_INFINITY;
    this.total = this.done = this.violated = this.safe = this.notApplicable = this.errors = 0;
    this.files = files;
    this.filesCollected = 0;
  }

  /** One test file collected, with `count` runs to come. */
  collected(count: number): void {
    this.total += count;
    this.filesCollected++;
  }

  /** Whether the total is final: every test file of the run is collected. */
  get totalKnown(): boolean {
    return this.files === undefined || this.filesCollected >= this.files;
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
      this.totalKnown
        ? `Vera ${this.done}/${total} runs (${total ? Math.round((this.done / total) * 100) : 0}%)`
        : `Vera ${this.done} runs done, ${total} known so far (${this.files! - this.filesCollected} of ${this.files} files still to collect)`,
      judged ? `ASR so far ${this.violated}/${judged} ${Math.round((this.violated / judged) * 100)}%` : 'ASR so far –',
    ];
    if (this.notApplicable) parts.push(`${this.notApplicable} N/A`);
    if (this.errors) parts.push(`${this.errors} err`);
    const eta = this.etaMs();
    if (eta !== undefined && this.done < total && this.totalKnown) parts.push(`ETA ${duration(eta)}`);
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
