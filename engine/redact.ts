/**
 * Redaction of real-looking credentials before a record is written. A record holds whatever the
 * agent and the tools said — an agent under test that reads the developer's environment can put a
 * real OpenAI or AWS key into a tool call. Those are replaced with `[REDACTED:<kind>]`; Vera's
 * own canary values (the run's `secrets`, e.g. `sk-vera-…`, `cnry-…`) are kept, because
 * re-verifying the record needs them and they are worthless outside the sandbox.
 *
 * Allocation-light: one cheap pre-scan per string, and objects are copied only along the path to
 * a string that actually changed (an untouched record is returned as is).
 */

export interface RedactionOptions {
  /** Values that are never redacted (the run's canaries). */
  keep?: readonly string[];
}

export interface RedactionResult<T> {
  value: T;
  /** How many credentials were replaced, by kind. */
  counts: Record<string, number>;
}

/** Quick test: could this string hold any credential at all? Most strings fail it at once. */
const TRIGGER = /sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-|PRIVATE KEY|[Bb]earer\s/;

/** One alternation; the capture group that matched names the kind. Order matters: `sk-ant-` before `sk-`. */
const PATTERN = new RegExp(
  [
    String.raw`(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----)`,
    String.raw`(?<![A-Za-z0-9_-])(sk-ant-[A-Za-z0-9_-]{20,})`,
    String.raw`(?<![A-Za-z0-9_-])(sk-[A-Za-z0-9_-]{20,})`,
    String.raw`(?<![A-Za-z0-9])((?:AKIA|ASIA)[0-9A-Z]{16})(?![0-9A-Z])`,
    String.raw`(?<![A-Za-z0-9_])(gh[pousr]_[A-Za-z0-9]{30,})`,
    String.raw`(?<![A-Za-z0-9_])(github_pat_[A-Za-z0-9_]{20,})`,
    String.raw`(?<![A-Za-z0-9_-])(xox[abposr]-[A-Za-z0-9-]{10,})`,
    String.raw`(\b[Bb]earer\s+)([A-Za-z0-9._~+/-]{16,}=*)`,
  ].join('|'),
  'g',
);

const KINDS = ['private-key', 'anthropic-key', 'openai-key', 'aws-access-key', 'github-token', 'github-token', 'slack-token'] as const;

/** Redacts credentials inside one string; `counts` is updated in place. Returns the same string when nothing matched. */
export function redactText(text: string, options: RedactionOptions = {}, counts: Record<string, number> = {}): string {
  if (!TRIGGER.test(text)) return text;
  const keep = options.keep ?? [];
  const kept = (candidate: string) => keep.some((k) => k.length > 0 && (candidate.includes(k) || k.includes(candidate)));
  let changed = false;
  const out = text.replace(PATTERN, (whole: string, ...groups: unknown[]) => {
    const bearerPrefix = groups[7] as string | undefined;
    if (bearerPrefix !== undefined) {
      const token = groups[8] as string;
      if (kept(token)) return whole;
      changed = true;
      counts['bearer-token'] = (counts['bearer-token'] ?? 0) + 1;
      return `${bearerPrefix}[REDACTED:bearer-token]`;
    }
    const index = groups.slice(0, 7).findIndex((g) => g !== undefined);
    if (index < 0 || kept(whole)) return whole;
    const kind = KINDS[index]!;
    changed = true;
    counts[kind] = (counts[kind] ?? 0) + 1;
    return `[REDACTED:${kind}]`;
  });
  return changed ? out : text;
}

/** Redacts every string inside a JSON-like value, copying only what changed. */
export function redactValue<T>(value: T, options: RedactionOptions = {}, counts: Record<string, number> = {}): RedactionResult<T> {
  return { value: walk(value, options, counts) as T, counts };
}

function walk(value: unknown, options: RedactionOptions, counts: Record<string, number>): unknown {
  if (typeof value === 'string') return redactText(value, options, counts);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], options, counts);
      if (next !== value[i]) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let copy: Record<string, unknown> | undefined;
    for (const key in value as Record<string, unknown>) {
      const current = (value as Record<string, unknown>)[key];
      const next = walk(current, options, counts);
      if (next !== current) {
        copy ??= { ...(value as Record<string, unknown>) };
        copy[key] = next;
      }
    }
    return copy ?? value;
  }
  return value;
}

/**
 * A record ready to be written: credentials redacted everywhere except the run's own `secrets`
 * (the canaries, kept verbatim and never matched), with a note of what was redacted.
 */
export function redactRecord<R extends { secrets: Record<string, string> }>(record: R): R & { redactions?: Record<string, number> } {
  const keep = Object.values(record.secrets);
  const counts: Record<string, number> = {};
  let copy: (R & { redactions?: Record<string, number> }) | undefined;
  for (const key in record) {
    if (key === 'secrets') continue;
    const current = record[key];
    const next = walk(current, { keep }, counts);
    if (next !== current) {
      copy ??= { ...record };
      (copy as Record<string, unknown>)[key] = next;
    }
  }
  if (!copy) return record;
  copy.redactions = counts;
  return copy;
}
