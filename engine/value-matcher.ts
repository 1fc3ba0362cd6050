import { casePattern, MATCH_WORK_BUDGET } from './case-pattern.js';
import { deepEqual, isEmptyNeedle, isPlainObject, preview, toText } from './json.js';
import { describeNormalizers, normalizeDeep, normalizersOf, normalizeText, type Normalizer } from './normalize.js';
import { resolveOperand, type OperandScope, type OperandValue } from './operands.js';
import type { Condition, Operand, ValueMatcher } from './predicate-schema.js';
import { OperandError } from './verifier-error.js';

export { matchFields, type FieldsOutcome } from './field-conditions.js';
export { resolveOperand, type OperandScope } from './operands.js';

export interface MatchOutcome {
  ok: boolean;
  /** Why, in words that make sense inside evidence: `contains "x" (got "…")`. */
  why: string;
}

const MISSING = 'missing';

function got(actual: unknown): string {
  return actual === undefined ? MISSING : preview(actual, 80);
}

/** No value: absent, or null (a database snapshot stores SQL NULL as JSON null). */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

/** Every string in an object's values, at any depth (keys are structure, not content). */
function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (isPlainObject(value)) for (const v of Object.values(value)) stringsIn(v, out);
  return out;
}

/**
 * `contains`, both sides already normalised. Text is searched only for text (`100` is not in
 * "1000"); a list contains an element equal to the needle ("bob@x" is not in ["jimbob@x"]); an
 * object contains text that one of its string values contains, or a value equal to the needle.
 */
function containsValue(actual: unknown, needle: unknown): boolean {
  if (typeof actual === 'string') return typeof needle === 'string' && actual.includes(needle);
  if (Array.isArray(actual)) return actual.some((item) => deepEqual(item, needle));
  if (isPlainObject(actual)) {
    return typeof needle === 'string' ? stringsIn(actual).some((s) => s.includes(needle)) : Object.values(actual).some((v) => deepEqual(v, needle));
  }
  return false;
}

function containsHint(actual: unknown, needle: unknown): string {
  if (typeof actual === 'string' && typeof needle !== 'string') return '; text is searched only for text';
  if (Array.isArray(actual) && typeof needle === 'string' && actual.some((item) => typeof item === 'string' && item.includes(needle))) {
    return '; a list contains whole elements: use some: { contains: … } for text inside one';
  }
  return '';
}

function compare(actual: unknown, bound: number, op: 'gt' | 'gte' | 'lt' | 'lte'): boolean {
  if (typeof actual !== 'number' || Number.isNaN(actual)) return false;
  switch (op) {
    case 'gt':
      return actual > bound;
    case 'gte':
      return actual >= bound;
    case 'lt':
      return actual < bound;
    case 'lte':
      return actual <= bound;
  }
}

function lengthOf(actual: unknown): number | undefined {
  if (typeof actual === 'string' || Array.isArray(actual)) return actual.length;
  if (isPlainObject(actual)) return Object.keys(actual).length;
  return undefined;
}

function itemsOf(actual: unknown): unknown[] | undefined {
  if (Array.isArray(actual)) return actual;
  if (isPlainObject(actual)) return Object.values(actual);
  return undefined;
}

/**
 * The first operand value for which `holds` is true; an operand naming several values holds
 * when one of them does. Evidence names that value, or all of them when none did.
 */
function anyValue(operand: Operand, scope: OperandScope, holds: (v: OperandValue) => boolean): { ok: boolean; source: string } {
  const resolved = resolveOperand(operand, scope);
  const hit = resolved.values.find(holds);
  return hit ? { ok: true, source: hit.source } : { ok: false, source: resolved.label };
}

/**
 * Every condition in the matcher must hold (they are joined by "and"). `inherited` are the
 * normalisers (and `ignoreCase`) of an enclosing matcher: `{ ignoreCase: true, not: { equals: X } }`
 * compares ignoring case inside the `not` too.
 */
export function matchValue(matcher: Condition, actual: unknown, scope: OperandScope, inherited: readonly Normalizer[] = []): MatchOutcome {
  if (typeof matcher !== 'object' || matcher === null) return matchValue({ equals: matcher }, actual, scope, inherited);
  const m: ValueMatcher = matcher;
  const norms = normalizersOf(m, inherited);
  const normalised = normalizeDeep(actual, norms);
  const after = describeNormalizers(norms);
  const reasons: string[] = [];
  let ok = true;
  const check = (holds: boolean, why: string) => {
    reasons.push(why);
    if (!holds) ok = false;
  };

  if (m.exists !== undefined) {
    const present = !isAbsent(actual);
    check(present === m.exists, `${m.exists ? 'exists' : 'does not exist'}${actual === null ? ' (null counts as missing)' : ''} (got ${got(actual)})`);
  }
  if (m.equals !== undefined) {
    const r = anyValue(m.equals, scope, (v) => deepEqual(normalised, normalizeDeep(v.value, norms)));
    check(r.ok, `equals ${r.source}${after} (got ${got(actual)}${r.ok ? '' : typeHint(m.equals, actual)})`);
  }
  if (m.contains !== undefined) {
    let needle: unknown;
    const r = anyValue(m.contains, scope, (v) => {
      needle = normalizeDeep(v.value, norms);
      if (isEmptyNeedle(needle)) throw new OperandError(`contains ${v.source} is empty${after}: every value would contain it`);
      return containsValue(normalised, needle);
    });
    check(r.ok, `contains ${r.source}${after} (got ${got(actual)}${r.ok ? '' : containsHint(normalised, needle)})`);
  }
  if (m.matches !== undefined) {
    // A secret's template stands for its value, literally (escaped), as in every other string of a verifier.
    const source = m.matches.includes('{{') ? m.matches.replace(SECRET_TEMPLATE, (w, name: string) => escapeRegExp(scope.secrets[name] ?? w)) : m.matches;
    const pattern = casePattern(source, m.ignoreCase);
    const text = isAbsent(actual) ? '' : normalizeText(toText(actual), norms);
    if (scope.matchWork) {
      const work = pattern.size * text.length;
      if (work > scope.matchWork.left) {
        throw new OperandError(
          `matches /${m.matches}/ over ${text.length} characters is more than this verification may spend (a pattern of ${pattern.size} instructions; ${MATCH_WORK_BUDGET} instructions × characters per run): the run cannot be judged — match a smaller field, or use contains`,
        );
      }
      scope.matchWork.left -= work;
    }
    const holds = !isAbsent(actual) && pattern.test(text);
    check(holds, `matches /${m.matches}/${m.ignoreCase ? 'i' : ''}${after} (got ${got(actual)})`);
  }
  if (m.oneOf !== undefined) {
    const options = m.oneOf.flatMap((o) => resolveOperand(o, scope).values.map((v) => v.value));
    check(
      options.some((o) => deepEqual(normalised, normalizeDeep(o, norms))),
      `one of ${preview(options, 80)}${after} (got ${got(actual)})`,
    );
  }
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    const bound = m[op];
    if (bound === undefined) continue;
    const r = anyValue(bound, scope, (v) => {
      // A bound that is not a number makes the comparison meaningless, not false.
      if (typeof v.value !== 'number') throw new OperandError(`${op}: ${v.source} is not a number`);
      return compare(actual, v.value, op);
    });
    const symbol = { gt: '>', gte: '≥', lt: '<', lte: '≤' }[op];
    check(r.ok, `${symbol} ${r.source} (got ${got(actual)}${typeof actual === 'string' && !r.ok ? '; a string is never compared as a number' : ''})`);
  }
  if (m.length !== undefined) {
    const length = lengthOf(actual);
    const inner = length === undefined ? { ok: false, why: `has no length (got ${got(actual)})` } : matchValue(m.length, length, scope);
    check(inner.ok, `length ${inner.why}`);
  }
  if (m.some !== undefined) {
    const items = itemsOf(actual);
    const hit = items?.find((item) => matchValue(m.some!, item, scope, norms).ok);
    check(hit !== undefined, `some item ${describeCondition(m.some)}${hit !== undefined ? ` (got ${preview(hit, 60)})` : ` (got ${got(actual)})`}`);
  }
  if (m.every !== undefined) {
    const items = itemsOf(actual);
    const miss = items?.find((item) => !matchValue(m.every!, item, scope, norms).ok);
    // Like `quantifier: all`, "every item" of nothing does not hold: an empty list is no evidence.
    const empty = items !== undefined && items.length === 0;
    const detail = miss !== undefined ? ` (not ${preview(miss, 60)})` : empty ? ' (there are no items)' : items === undefined ? ` (got ${got(actual)})` : '';
    check(items !== undefined && !empty && miss === undefined, `every item ${describeCondition(m.every)}${detail}`);
  }
  if (m.not !== undefined) {
    const inner = matchValue(m.not, actual, scope, norms);
    check(!inner.ok, `not (${inner.why})`);
  }
  return { ok, why: reasons.join(' and ') };
}

export function describeCondition(c: Condition): string {
  if (!isPlainObject(c)) return `equals ${preview(c, 60)}`;
  return Object.entries(c)
    .filter(([k]) => k !== 'ignoreCase' && k !== 'normalize')
    .map(([k, v]) => `${k} ${preview(v, 60)}`)
    .join(' and ');
}

/** Why an `equals` between a number and a string never holds, and what to write instead. */
function typeHint(operand: unknown, actual: unknown): string {
  if (typeof operand === 'number' && typeof actual === 'string') {
    return `; a number never equals a string: write "${operand}" (quoted) to compare text${/\d/.test(actual) ? ', or add normalize: digits to compare the digits only' : ''}`;
  }
  if (typeof operand === 'string' && typeof actual === 'number') return `; a string never equals a number: write ${operand} without quotes to compare numbers`;
  return '';
}

const SECRET_TEMPLATE = /\{\{\s*secret\.([A-Z][A-Z0-9_]*)\s*\}\}/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
