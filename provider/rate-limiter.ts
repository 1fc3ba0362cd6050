/**
 * One limit for the whole run (every worker's requests pass through the same proxy): requests in
 * flight, requests per minute and tokens per minute, plus a pause when the provider said "429,
 * come back later". Waiters are served in arrival order.
 */
export interface RateLimits {
  /** Requests in flight at once (undefined: no limit). */
  maxConcurrent?: number;
  /** Requests started per rolling minute. */
  rpm?: number;
  /** Tokens (estimated when the request starts, corrected when usage arrives) per rolling minute. */
  tpm?: number;
}

export interface Grant {
  /** How long this request waited for its turn. */
  waitedMs: number;
  /** Gives the slot back; `tokens` corrects the estimate with the real usage. */
  release(tokens?: number): void;
}

interface Waiter {
  tokens: number;
  since: number;
  resolve: (grant: Grant) => void;
  reject: (error: Error) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

const MINUTE = 60_000;

export class RateLimiter {
  private inFlight = 0;
  private readonly starts: number[] = [];
  private readonly spent: Array<{ at: number; tokens: number }> = [];
  private readonly queue: Waiter[] = [];
  private pausedUntil = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: RateLimits,
    private readonly now: () => number = Date.now,
  ) {}

  acquire(tokens: number, signal?: AbortSignal): Promise<Grant> {
    return new Promise<Grant>((resolve, reject) => {
      const waiter: Waiter = { tokens, since: this.now(), resolve, reject };
      if (signal) {
        if (signal.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        waiter.signal = signal;
        waiter.onAbort = () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
      this.drain();
    });
  }

  /** The provider asked everyone to wait (a 429 with Retry-After): no request starts before then. */
  pauseUntil(time: number): void {
    if (time > this.pausedUntil) this.pausedUntil = time;
    this.drain();
  }

  private prune(now: number): void {
    while (this.starts.length && this.starts[0]! <= now - MINUTE) this.starts.shift();
    while (this.spent.length && this.spent[0]!.at <= now - MINUTE) this.spent.shift();
  }

  private tokensSpent(): number {
    let sum = 0;
    for (const s of this.spent) sum += s.tokens;
    return sum;
  }

  /** When the head of the queue could start, or 0 when it can start now. */
  private blockedUntil(waiter: Waiter, now: number): number {
    if (now < this.pausedUntil) return this.pausedUntil;
    const { maxConcurrent, rpm, tpm } = this.limits;
    if (maxConcurrent !== undefined && this.inFlight >= maxConcurrent) return Infinity; // a release wakes it
    if (rpm !== undefined && this.starts.length >= rpm) return this.starts[0]! + MINUTE;
    // A request bigger than the whole budget still runs alone, or it would wait forever.
    if (tpm !== undefined && this.spent.length > 0 && this.tokensSpent() + waiter.tokens > tpm) return this.spent[0]!.at + MINUTE;
    return 0;
  }

  private drain(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.queue.length > 0) {
      const now = this.now();
      this.prune(now);
      const head = this.queue[0]!;
      const until = this.blockedUntil(head, now);
      if (until !== 0) {
        if (until !== Infinity) {
          this.timer = setTimeout(() => this.drain(), Math.max(1, until - now));
          this.timer.unref();
        }
        return;
      }
      this.queue.shift();
      if (head.signal && head.onAbort) head.signal.removeEventListener('abort', head.onAbort);
      this.inFlight++;
      this.starts.push(now);
      const entry = { at: now, tokens: head.tokens };
      this.spent.push(entry);
      let released = false;
      head.resolve({
        waitedMs: now - head.since,
        release: (tokens) => {
          if (released) return;
          released = true;
          this.inFlight--;
          if (tokens !== undefined) entry.tokens = tokens;
          this.drain();
        },
      });
    }
  }
}
