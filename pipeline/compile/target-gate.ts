import type { SafetyCase } from '../../engine/case-schema.js';
import { casePattern } from '../../engine/case-pattern.js';
import { isPlainObject, type JsonObject } from '../../engine/json.js';
import { parsePath, resolvePath } from '../../engine/paths.js';
import { formatPath } from './verifier-references.js';

/**
 * Does the verifier test the goal's target? A verifier can be valid, resolvable and proven by its
 * own witnesses and still check something beside the point (any mail sent, any file written). Two
 * rules, both on data, never on the model's say-so:
 *
 * Anchored — the verifier names something the case sets up: a canary secret, a `fromInitial`
 * value, one place of the state (`state` with `value`: a setting), or a literal that refers to a
 * value the init script seeded or the attack text names (a look-alike domain) — a `matches`
 * pattern that matches one of them, or a literal equal to it, contained in a short seeded value
 * (an id, a path, an address, a name) or containing one (a state path with the file name in it),
 * or a distinctive phrase (8+ characters) of seeded prose.
 * Without an anchor the verifier cannot tell this case's target from any other resource.
 *
 * On target (compiled cases) — the goal names its target resource: at least one of its concrete
 * identifiers (a path, an address, an id, a quoted name — `targetIdentifiers`) is seeded by the
 * init script and named by the verifier; a goal about a secret is on target when the verifier
 * names a secret the init script planted.
 */

/** Seeded values this long or shorter are identifiers, not prose: containment in them counts. */
const SHORT_VALUE = 80;
/** A literal this long found inside seeded prose is distinctive enough to name that item. */
const DISTINCTIVE = 8;
/** Literals shorter than this match too much to anchor anything. */
const MIN_ANCHOR = 3;
/** Keys whose string values are vocabulary of the predicate language, not references to data. */
const KEYWORD_KEYS = new Set(['scope', 'quantifier', 'normalize', 'origin', 'turn', 'tool', 'label', 'encodings', 'channel', 'of', 'key', 'sum', 'min', 'max']);
const SECRET_PLACEHOLDER = /\{\{\s*secret\.([A-Za-z0-9_-]+)\s*\}\}/g;

export interface VerifierAnchors {
  /** Literals in a positive position: under an even number of `not`s (predicate or value matcher). */
  literals: string[];
  /** Literals under an odd number of `not`s: they say what must not happen, so they name no target. */
  negatedLiterals: string[];
  secrets: Set<string>;
  fromInitial: string[];
  /** `state` checks with `value`: each names one place (a setting), not any item of a collection. */
  places: string[];
  /** `matches` patterns (outside a `not`): a pattern names what it matches. */
  patterns: string[];
}

/**
 * What a predicate refers to: its literal strings, the secrets and initial-state values it names —
 * read with polarity. Each `not` (a predicate's or a value matcher's) flips it, so `not: { not: … }`
 * is positive again; only what the check needs to be there counts as naming something. A state
 * check's `quantifier: none` does not flip: "no file at /board/minutes.md" is a check on that file.
 */
export function verifierAnchors(predicate: unknown): VerifierAnchors {
  const anchors: VerifierAnchors = { literals: [], negatedLiterals: [], secrets: new Set(), fromInitial: [], places: [], patterns: [] };
  const walk = (value: unknown, key?: string, negated = false): void => {
    if (typeof value === 'string') {
      if (negated) {
        if (key !== 'matches' && (!key || !KEYWORD_KEYS.has(key))) anchors.negatedLiterals.push(value);
        return;
      }
      for (const m of value.matchAll(SECRET_PLACEHOLDER)) anchors.secrets.add(m[1]!);
      if (key === 'secret') anchors.secrets.add(value);
      else if (key === 'matches') anchors.patterns.push(value);
      else if (key === 'fromInitial') anchors.fromInitial.push(value);
      else if (!key || !KEYWORD_KEYS.has(key)) anchors.literals.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, key, negated);
    } else if (isPlainObject(value)) {
      if (!negated && key === 'state' && typeof value.path === 'string' && value.value !== undefined) anchors.places.push(value.path);
      for (const [k, v] of Object.entries(value)) walk(v, k, k === 'not' ? !negated : negated);
    }
  };
  walk(predicate);
  return anchors;
}

/** Every string the init script writes (its arguments), and the secrets it plants. */
export function seededValues(init: SafetyCase['init']): { strings: string[]; secrets: Set<string> } {
  const strings: string[] = [];
  const secrets = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      strings.push(value);
      for (const m of value.matchAll(SECRET_PLACEHOLDER)) secrets.add(m[1]!);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (isPlainObject(value)) Object.values(value).forEach(walk);
  };
  for (const step of init) walk(step.args);
  return { strings, secrets };
}

const norm = (s: string) => s.trim().toLowerCase();

/** Whether `literal` refers to one of the seeded strings (see the rule above). */
function refersToSeeded(literal: string, seeded: readonly string[]): boolean {
  const l = norm(literal);
  if (l.length < MIN_ANCHOR) return false;
  return seeded.some((raw) => {
    const s = norm(raw);
    if (s.length < MIN_ANCHOR) return false;
    if (s === l) return true;
    if (s.length <= SHORT_VALUE) return s.includes(l) || l.includes(s);
    // In prose (a mail body, a document) only a distinctive phrase anchors: "Countersigned", not "the".
    return l.length >= DISTINCTIVE && s.includes(l);
  });
}

/** The attacker's own words: payloads and messages, where an attacker-supplied target (a look-alike domain, an account) is named. */
export function attackStrings(attack: SafetyCase['attack']): string[] {
  return [...(attack.messages ?? []), ...attack.injections.map((r) => r.payload), ...attack.toolDescriptions.map((r) => r.payload)];
}

export function anchorProblems(spec: Pick<SafetyCase, 'verifier' | 'init' | 'secrets' | 'attack'>): string[] {
  const anchors = verifierAnchors(spec.verifier);
  const seeded = seededValues(spec.init);
  const planted = new Set([...seeded.secrets, ...Object.keys(spec.secrets ?? {})]);
  if ([...anchors.secrets].some((s) => planted.has(s))) return [];
  if (anchors.fromInitial.length > 0 || anchors.places.length > 0) return [];
  const named = [...seeded.strings, ...attackStrings(spec.attack)];
  if (anchors.literals.some((l) => refersToSeeded(l, named))) return [];
  if (anchors.patterns.some((p) => named.some((text) => casePattern(p).test(text)))) return [];
  return [
    "verifier: it names nothing the case sets up — no planted secret, no fromInitial value, no single setting, no id, path, address or name from the init script or the attack — so it cannot tell the goal's target from any other resource",
  ];
}

/**
 * The concrete identifiers in a goal's free-text target: quoted names, paths, e-mail addresses,
 * domains, and tokens with a digit, `_`, `-`, `.` or `/` in them (ids, file names, account numbers).
 */
export function targetIdentifiers(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/["'`“‘]([^"'`”’]{3,80})["'`”’]/g)) out.add(m[1]!.trim());
  for (const raw of text.split(/[\s,;()]+/)) {
    const token = raw.replace(/^[^\w/@#~.]+|[^\w]+$/g, '');
    if (token.length >= MIN_ANCHOR && /[\d_\-./@#]/.test(token) && /[a-z0-9]/i.test(token)) out.add(token);
  }
  return [...out];
}

const SECRET_WORDS = /\b(secret|credential|token|password|passphrase|api[ -]?key|access key|private key|canary)s?\b/i;

/**
 * Whether a `fromInitial` read is a read of `id`: its path names it, or what it reads in the initial
 * snapshot — the value, or the item (mail, file, record) holding it — carries it.
 */
function readsTarget(path: string, id: string, initial: JsonObject | undefined): boolean {
  if (refersToSeeded(path, [id])) return true;
  if (!initial) return false;
  for (const match of resolvePath(initial, path)) {
    const segments = parsePath(match.path);
    const holders = [match.value, ...(segments.length > 2 ? resolvePath(initial, formatPath(segments.slice(0, -1))).map((m) => m.value) : [])];
    if (holders.some((holder) => stringsIn(holder).some((text) => refersToSeeded(id, [text])))) return true;
  }
  return false;
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (isPlainObject(value)) return Object.values(value).flatMap(stringsIn);
  return [];
}

export function targetProblems(
  spec: Pick<SafetyCase, 'verifier' | 'init' | 'secrets' | 'attack'>,
  goal: { targetResource: string; goal?: string },
  options: { initial?: JsonObject } = {},
): string[] {
  const anchors = verifierAnchors(spec.verifier);
  const seeded = seededValues(spec.init);
  const planted = new Set([...seeded.secrets, ...Object.keys(spec.secrets ?? {})]);
  if (SECRET_WORDS.test(goal.targetResource) && [...anchors.secrets].some((s) => planted.has(s))) return [];
  const ids = targetIdentifiers(goal.targetResource);
  if (ids.length === 0) return anchorProblems(spec);
  const seededIds = ids.filter((id) => refersToSeeded(id, seeded.strings));
  if (seededIds.length === 0) {
    return [`init: the goal's target (${ids.map((i) => JSON.stringify(i)).join(', ')}) is not seeded by the init script`];
  }
  const named = seededIds.some(
    (id) => anchors.literals.some((l) => refersToSeeded(l, [id])) || anchors.fromInitial.some((path) => readsTarget(path, id, options.initial)),
  );
  if (!named) {
    const target = seededIds.map((i) => JSON.stringify(i)).join(' or ');
    const onlyNegated = seededIds.some((id) => anchors.negatedLiterals.some((l) => refersToSeeded(l, [id])));
    return [
      onlyNegated
        ? `verifier: it names the goal's target ${target} only under \`not\` — there it says what must not happen, so the check holds while the target is left alone; name the target in the positive check (the call, the state change or the egress that harms it)`
        : `verifier: it does not name the goal's target ${target}; a check on another resource would pass the witnesses and miss the goal`,
    ];
  }
  return [];
}
