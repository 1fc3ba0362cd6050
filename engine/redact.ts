/**
 * Redaction of real-looking credentials before a record is written. A record holds whatever the
 * agent and the tools said — an agent under test that reads the developer's environment can put a
 * real OpenAI or AWS key into a tool call. Each distinct credential becomes one stable placeholder,
 * `[REDACTED:<kind>:<n>]` (the same key is the same placeholder everywhere in the record, two keys
 * are two), so what a reader — or a verifier run again on the record — compares stays comparable.
 *
 * Never redacted: the run's canaries (`secrets`: re-verification needs them and they are worthless
 * outside the sandbox) and the credential-shaped literals of the case's own checks (an `AKIA…` key
 * id its verifier compares with: it is in the case file). A verdict is decided before redaction;
 * with stable placeholders and those literals kept, the record is judged the same again
 * (`vera replay`) — short of a check that compares part of a redacted credential, or its encoding.
 *
 * Truncation happens before redaction (evidence previews, a mail's snippet), so a credential cut
 * short — `sk-proj-Zq3vT9…` — is redacted too: as the placeholder of the full key when the record
 * holds it, else as a credential of its own.
 *
 * Allocation-light: one cheap pre-scan per string, and objects are copied only along the path to
 * a string that actually changed (an untouched record is returned as is).
 */

export interface RedactionOptions {
  /** Values that are never redacted (the run's canaries). */
  keep?: readonly string[];
  /**
   * The case's own text: a credential-named variable's value written in it (a password the
   * attacker dictates, a value the init seeds) is the case's, not the developer's, and is kept.
   * Keys of a provider's shape are redacted even there: a case may seed a real-looking key to see
   * where the agent moves it.
   */
  caseText?: string;
}

export interface RedactionResult<T> {
  value: T;
  /** How many credentials were replaced, by kind. */
  counts: Record<string, number>;
}

/** Quick test: could this string hold any credential at all? Most strings fail it at once. */
const TRIGGER =
  /sk-|[sr]k_(?:live|test)_|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-|PRIVATE KEY|[Bb]earer\s|AIza|eyJ|[Ss]ecret|SECRET|KEY|TOKEN|PASSW|CREDENTIAL/;

/** Credential-named variables (`OPENAI_API_KEY`, `DB_PASSWORD`, `GH_TOKEN`): their values are credentials whatever they look like. */
const CREDENTIAL_NAME = /^[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_[A-Z0-9_]*)?$/;

/** Kinds with a shape of their own, in the order they are tried (`sk-ant-` before `sk-`). */
const SHAPED: ReadonlyArray<readonly [kind: string, pattern: string]> = [
  ['private-key', String.raw`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`],
  ['anthropic-key', String.raw`(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}`],
  ['openai-key', String.raw`(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}`],
  ['stripe-key', String.raw`(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`],
  ['aws-access-key', String.raw`(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])`],
  ['github-token', String.raw`(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})`],
  ['slack-token', String.raw`(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}`],
  ['google-api-key', String.raw`(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])`],
  ['jwt', String.raw`(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`],
];
/** Kinds known by what precedes the value: the prefix stays, the value goes. */
const PREFIXED: ReadonlyArray<readonly [kind: string, prefix: string, value: string]> = [
  ['bearer-token', String.raw`\b[Bb]earer\s+`, String.raw`[A-Za-z0-9._~+/-]{16,}=*`],
  [
    'aws-secret-key',
    String.raw`(?:aws_secret_access_key|secret_access_key|SecretAccessKey|aws_secret_key|AWS_SECRET_ACCESS_KEY)["']?\s*[:=]\s*["']?`,
    String.raw`[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])`,
  ],
  [
    'credential',
    String.raw`\b[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_[A-Z0-9_]*)?\s*[=:]\s*["']?`,
    String.raw`(?!\[REDACTED)[^\s"'&,;]{8,}`,
  ],
];

const PATTERN = new RegExp([...SHAPED.map(([, p]) => `(${p})`), ...PREFIXED.map(([, prefix, value]) => `(${prefix})(${value})`)].join('|'), 'g');
const SHAPED_ONLY = new RegExp(`^(?:${SHAPED.map(([, p]) => `(${p})`).join('|')})$`);

/** A credential's beginning cut off by an ellipsis: `sk-proj-Zq3v…`. */
const FRAGMENT = /(?<![A-Za-z0-9_-])(sk-ant-|sk-|[sr]k_(?:live|test)_|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-|AIza|eyJ)([A-Za-z0-9_\-.]*)…/g;
const FRAGMENT_KIND: Record<string, string> = {
  'sk-ant-': 'anthropic-key',
  'sk-': 'openai-key',
  AKIA: 'aws-access-key',
  ASIA: 'aws-access-key',
  AIza: 'google-api-key',
  eyJ: 'jwt',
};
/** Shorter tails are too short to be a secret (`sk-1…`). */
const MIN_FRAGMENT_TAIL = 8;

function shapedKind(value: string): string | undefined {
  const m = SHAPED_ONLY.exec(value);
  if (!m) return undefined;
  const index = m.slice(1).findIndex((g) => g !== undefined);
  return SHAPED[index]?.[0];
}

function fragmentKind(marker: string): string {
  if (FRAGMENT_KIND[marker]) return FRAGMENT_KIND[marker]!;
  if (/^[sr]k_/.test(marker)) return 'stripe-key';
  if (marker.startsWith('xox')) return 'slack-token';
  return 'github-token';
}

/**
 * One record's redaction: the placeholders it has handed out (a credential seen twice gets the
 * same one), what it keeps, and the counts by kind.
 */
export class Redactor {
  readonly counts: Record<string, number> = {};
  private readonly placeholders = new Map<string, string>();
  private readonly perKind = new Map<string, number>();
  private readonly canaries: string[];
  private readonly known = new Set<string>();
  private readonly caseText: string;

  constructor(options: RedactionOptions = {}) {
    this.canaries = (options.keep ?? []).filter((k) => k.length > 0);
    this.caseText = options.caseText ?? '';
  }

  /** Every credential-shaped value inside `value` is kept from now on (the initial state's fabricated data). */
  keepFound(value: unknown): void {
    visitStrings(value, (text, key) => {
      if (key !== undefined && CREDENTIAL_NAME.test(key)) this.known.add(text);
      if (!TRIGGER.test(text)) return;
      for (const m of text.matchAll(PATTERN)) this.known.add(tokenOf(m));
    });
  }

  private kept(candidate: string, kind?: string): boolean {
    if (this.known.has(candidate)) return true;
    if (kind === 'credential' && this.caseText.includes(candidate)) return true;
    return this.canaries.some((k) => candidate.includes(k) || k.includes(candidate));
  }

  private placeholder(kind: string, token: string): string {
    let found = this.placeholders.get(token);
    if (!found) {
      const n = (this.perKind.get(kind) ?? 0) + 1;
      this.perKind.set(kind, n);
      found = `[REDACTED:${kind}:${n}]`;
      this.placeholders.set(token, found);
    }
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
    return found;
  }

  /** Whole credentials in one string (pass one). Returns the same string when nothing matched. */
  redactText(text: string): string {
    if (!TRIGGER.test(text)) return text;
    let changed = false;
    const out = text.replace(PATTERN, (whole: string, ...groups: unknown[]) => {
      const shapedIndex = groups.slice(0, SHAPED.length).findIndex((g) => g !== undefined);
      if (shapedIndex >= 0) {
        if (this.kept(whole)) return whole;
        changed = true;
        return this.placeholder(SHAPED[shapedIndex]![0], whole);
      }
      for (let p = 0; p < PREFIXED.length; p++) {
        const prefix = groups[SHAPED.length + 2 * p] as string | undefined;
        if (prefix === undefined) continue;
        const token = groups[SHAPED.length + 2 * p + 1] as string;
        // A credential variable holding a key of a known shape is that key.
        const named = PREFIXED[p]![0];
        const kind = named === 'credential' ? (shapedKind(token) ?? named) : named;
        if (this.kept(token, kind)) return whole;
        changed = true;
        return `${prefix}${this.placeholder(kind, token)}`;
      }
      return whole;
    });
    return changed ? out : text;
  }

  /** Credentials cut short by an ellipsis (pass two, once every whole credential has its placeholder). */
  redactFragments(text: string): string {
    if (!text.includes('…') || !TRIGGER.test(text)) return text;
    let changed = false;
    const out = text.replace(FRAGMENT, (whole: string, marker: string, tail: string) => {
      const cut = marker + tail;
      for (const k of this.known) if (k.startsWith(cut)) return whole;
      if (this.canaries.some((k) => k.startsWith(cut) || cut.includes(k))) return whole;
      for (const [token, placeholder] of this.placeholders) {
        if (token.startsWith(cut)) {
          changed = true;
          this.counts[placeholder.slice(10, placeholder.lastIndexOf(':'))]! += 1;
          return `${placeholder}…`;
        }
      }
      if (tail.length < MIN_FRAGMENT_TAIL) return whole;
      changed = true;
      return `${this.placeholder(fragmentKind(marker), cut)}…`;
    });
    return changed ? out : text;
  }

  /** Every string inside a JSON-like value, both passes, copying only what changed. */
  redact<T>(value: T): T {
    return this.fragments(this.whole(value)) as T;
  }

  whole(value: unknown): unknown {
    return mapStrings(value, (text, key) => {
      // A credential-named field (an environment variable in a generated config) is a credential whatever its value looks like.
      if (key !== undefined && CREDENTIAL_NAME.test(key) && text.length >= 8 && !text.startsWith('[REDACTED')) {
        const kind = shapedKind(text) ?? 'credential';
        if (!this.kept(text, kind)) return this.placeholder(kind, text);
      }
      return this.redactText(text);
    });
  }

  fragments(value: unknown): unknown {
    return mapStrings(value, (text) => this.redactFragments(text));
  }
}

function tokenOf(m: RegExpMatchArray): string {
  for (let p = 0; p < PREFIXED.length; p++) {
    const token = m[1 + SHAPED.length + 2 * p + 1];
    if (token !== undefined) return token;
  }
  return m[0];
}

/** Redacts credentials inside one string. Returns the same string when nothing matched. */
export function redactText(text: string, options: RedactionOptions = {}, counts: Record<string, number> = {}): string {
  const redactor = new Redactor(options);
  const out = redactor.redactFragments(redactor.redactText(text));
  for (const [kind, n] of Object.entries(redactor.counts)) counts[kind] = (counts[kind] ?? 0) + n;
  return out;
}

/** Redacts every string inside a JSON-like value, copying only what changed. */
export function redactValue<T>(value: T, options: RedactionOptions = {}, counts: Record<string, number> = {}): RedactionResult<T> {
  const redactor = new Redactor(options);
  const out = redactor.redact(value);
  for (const [kind, n] of Object.entries(redactor.counts)) counts[kind] = (counts[kind] ?? 0) + n;
  return { value: out, counts };
}

function visitStrings(value: unknown, visit: (text: string, key: string | undefined) => void): void {
  const stack: Array<[unknown, string | undefined]> = [[value, undefined]];
  while (stack.length > 0) {
    const [v, key] = stack.pop()!;
    if (typeof v === 'string') visit(v, key);
    else if (Array.isArray(v)) for (const item of v) stack.push([item, undefined]);
    else if (v !== null && typeof v === 'object') for (const k in v as Record<string, unknown>) stack.push([(v as Record<string, unknown>)[k], k]);
  }
}

function mapStrings(value: unknown, map: (text: string, key: string | undefined) => string, key?: string): unknown {
  if (typeof value === 'string') return map(value, key);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = mapStrings(value[i], map);
      if (next !== value[i]) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let copy: Record<string, unknown> | undefined;
    for (const k in value as Record<string, unknown>) {
      const current = (value as Record<string, unknown>)[k];
      const next = mapStrings(current, map, k);
      if (next !== current) {
        copy ??= { ...(value as Record<string, unknown>) };
        copy[k] = next;
      }
    }
    return copy ?? value;
  }
  return value;
}

/**
 * A record ready to be written: credentials redacted everywhere except the run's own `secrets`
 * (the canaries, kept verbatim), the credential-shaped literals of the case's `checks` — its
 * verifier and utility, whose literals are in the case file for anyone to read and which a
 * verifier run again on the record must find where the live one did (`id equals "AKIA…"`) — and
 * credential-named values its text holds (`caseText`), with a note of what was redacted. The initial state is redacted like the rest, with the same
 * placeholders, so a check comparing a value with the initial state's still compares alike.
 */
export function redactRecord<R extends { secrets: Record<string, string> }>(record: R, options: CasePublic = {}): R & { redactions?: Record<string, number> } {
  const redactor = new Redactor({ keep: Object.values(record.secrets), ...(options.caseText !== undefined ? { caseText: options.caseText } : {}) });
  if (options.checks !== undefined) redactor.keepFound(options.checks);
  let copy: (R & { redactions?: Record<string, number> }) | undefined;
  const passes = [(v: unknown) => redactor.whole(v), (v: unknown) => redactor.fragments(v)];
  for (const pass of passes) {
    const source: Record<string, unknown> = copy ?? record;
    for (const key in source) {
      if (key === 'secrets' || key === 'redactions') continue;
      const current = source[key];
      const next = pass(current);
      if (next !== current) {
        copy ??= { ...record };
        (copy as Record<string, unknown>)[key] = next;
      }
    }
  }
  if (!copy) return record;
  copy.redactions = redactor.counts;
  return copy;
}

/** What of a case `redactRecord` keeps: the literals its checks compare with, and its text (for credential-named values). */
export interface CasePublic {
  checks?: unknown;
  caseText?: string;
}

export function casePublic(spec: { verifier: unknown; utility?: unknown }): CasePublic {
  const texts: string[] = [];
  visitStrings(spec, (text) => texts.push(text));
  return { checks: [spec.verifier, spec.utility], caseText: texts.join('\n') };
}
