/**
 * When to retry a model request, and how long to wait first. Providers say how long in
 * `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date); otherwise the wait grows
 * exponentially with jitter, so many workers hitting one limit do not retry in lockstep.
 */
export interface RetryOptions {
  maxRetries: number;
  /** First backoff step when the provider gives no hint (default 500 ms). */
  baseMs: number;
  /** Longest single wait (default 60 s): a provider asking for more fails the request instead. */
  maxMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 4, baseMs: 500, maxMs: 60_000 };

/** 408 timeout, 409 conflict/lock, 429 rate limit, 5xx faults, 529 Anthropic overload. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status === 529 || (status >= 500 && status <= 504);
}

type HeaderSource = { get(name: string): string | null };

/** The wait the provider asked for, in ms, or undefined when it gave none (or an unreadable one). */
export function retryAfterMs(headers: HeaderSource, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(after.trim())) return Math.max(0, Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** How long to wait before attempt `attempt + 1` (attempt counts from 0). */
export function retryDelayMs(attempt: number, hinted: number | undefined, options: RetryOptions, random: () => number = Math.random): number {
  if (hinted !== undefined) return Math.min(hinted, options.maxMs);
  const exponential = options.baseMs * 2 ** attempt;
  // Full jitter over the upper half: spreads retries, never waits less than half the step.
  return Math.min(options.maxMs, Math.round(exponential * (0.5 + random() / 2)));
}
