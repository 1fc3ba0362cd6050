import { casePattern, type CasePattern } from './case-pattern.js';
import { deepEqual, isPlainObject, preview, toText } from './json.js';
import { resolvePath } from './paths.js';
import type { Condition, FieldConditions, Operand, ValueMatcher } from './predicate-schema.js';
import { fillSecrets, type Secrets } from './secrets.js';

/** What operands may refer to: the run's secrets and the initial environment snapshot. */
export interface OperandScope {
  secrets: Secrets;
  initial: unknown;
}

export interface MatchOutcome {
  ok: boolean;
  /** Why, in words that make sense inside evidence: `contains "x" (got "…")`. */
  why: string;
}

const MISSING = 'missing';

function refOf(operand: Operand | undefined): { fromInitial?: string; secret?: string } | undefined {
  if (!isPlainObject(operand) || Object.keys(operand).length !== 1) return undefined;
  const o = operand as Record<string, unknown>;
  if (typeof o.fromInitial === 'string') return { fromInitial: o.fromInitial };
  if (typeof o.secret === 'string') return { secret: o.secret };
  return undefined;
}

export function resolveOperand(operand: Operand | undefined, scope: OperandScope): unknown {
  const ref = refOf(operand);
  if (ref?.fromInitial !== undefined) {
    const found = resolvePath(scope.initial, ref.fromInitial);
    return found.length > 0 ? found[0]!.value : undefined;
  }
  if (ref?.secret !== undefined) return scope.secrets[ref.secret];
  return fillSecrets(operand, scope.secrets);
}

function describeOperand(operand: Operand | undefined, value: unknown): string {
  const ref = refOf(operand);
  if (ref?.fromInitial !== undefined) return `initial ${ref.fromInitial} (${value === undefined ? MISSING : preview(value, 60)})`;
  if (ref?.secret !== undefined) return `secret ${ref.secret}`;
  if (typeof operand === 'string' && operand.includes('{{secret.')) return preview(operand, 80);
  return preview(value, 80);
}

function got(actual: unknown): string {
  return actual === undefined ? MISSING : preview(actual, 80);
}

function fold(value: unknown, ignoreCase: boolean | undefined): unknown {
  return ignoreCase && typeof value === 'string' ? value.toLowerCase() : value;
}

function containsValue(actual: unknown, needle: unknown, ignoreCase?: boolean): boolean {
  if (needle === undefined || needle === null || needle === '') return false;
  if (Array.isArray(actual)) {
    return actual.some((item) =>
      typeof item === 'string' ? containsValue(item, needle, ignoreCase) : deepEqual(item, needle),
    );
  }
  if (actual === undefined) return false;
  const hay = fold(toText(actual), ignoreCase) as string;
  const n = fold(typeof needle === 'string' ? needle : toText(needle), ignoreCase) as string;
  return hay.includes(n);
}

function regex(source: string, ignoreCase?: boolean): CasePattern {
  return casePattern(source, ignoreCase);
}

function compare(actual: unknown, bound: unknown, op: 'gt' | 'gte' | 'lt' | 'lte'): boolean {
  if (typeof actual !== 'number' || typeof bound !== 'number' || Number.isNaN(actual)) return false;
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

/** Every condition in the matcher must hold (they are joined by "and"). */
export function matchValue(matcher: Condition, actual: unknown, scope: OperandScope): MatchOutcome {
  if (!isPlainObject(matcher)) {
    const expected = resolveOperand(matcher as Operand, scope);
    return { ok: deepEqual(actual, expected), why: `equals ${describeOperand(matcher as Operand, expected)} (got ${got(actual)})` };
  }
  const m = matcher as ValueMatcher;
  const reasons: string[] = [];
  let ok = true;
  const check = (holds: boolean, why: string) => {
    reasons.push(why);
    if (!holds) ok = false;
  };

  if (m.exists !== undefined) check((actual !== undefined) === m.exists, m.exists ? `exists (got ${got(actual)})` : `does not exist (got ${got(actual)})`);
  if (m.equals !== undefined) {
    const expected = resolveOperand(m.equals, scope);
    check(expected !== undefined && deepEqual(fold(actual, m.ignoreCase), fold(expected, m.ignoreCase)), `equals ${describeOperand(m.equals, expected)} (got ${got(actual)})`);
  }
  if (m.contains !== undefined) {
    const needle = resolveOperand(m.contains, scope);
    check(containsValue(actual, needle, m.ignoreCase), `contains ${describeOperand(m.contains, needle)} (got ${got(actual)})`);
  }
  if (m.matches !== undefined) {
    check(actual !== undefined && regex(m.matches, m.ignoreCase).test(toText(actual)), `matches /${m.matches}/${m.ignoreCase ? 'i' : ''} (got ${got(actual)})`);
  }
  if (m.oneOf !== undefined) {
    const options = m.oneOf.map((o) => resolveOperand(o, scope));
    check(options.some((o) => deepEqual(fold(actual, m.ignoreCase), fold(o, m.ignoreCase))), `one of ${preview(options, 80)} (got ${got(actual)})`);
  }
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    if (m[op] === undefined) continue;
    const bound = resolveOperand(m[op], scope);
    const symbol = { gt: '>', gte: '≥', lt: '<', lte: '≤' }[op];
    check(compare(actual, bound, op), `${symbol} ${describeOperand(m[op], bound)} (got ${got(actual)})`);
  }
  if (m.length !== undefined) {
    const length = lengthOf(actual);
    const inner = length === undefined ? { ok: false, why: `has no length (got ${got(actual)})` } : matchValue(m.length, length, scope);
    check(inner.ok, `length ${inner.why}`);
  }
  if (m.some !== undefined) {
    const items = itemsOf(actual);
    const hit = items?.find((item) => matchValue(m.some!, item, scope).ok);
    check(hit !== undefined, `some item ${describeCondition(m.some)}${hit !== undefined ? ` (got ${preview(hit, 60)})` : ` (got ${got(actual)})`}`);
  }
  if (m.every !== undefined) {
    const items = itemsOf(actual);
    const miss = items?.find((item) => !matchValue(m.every!, item, scope).ok);
    check(items !== undefined && miss === undefined, `every item ${describeCondition(m.every)}${miss !== undefined ? ` (not ${preview(miss, 60)})` : ''}`);
  }
  if (m.not !== undefined) {
    const inner = matchValue(m.not, actual, scope);
    check(!inner.ok, `not (${inner.why})`);
  }
  return { ok, why: reasons.join(' and ') };
}

export function describeCondition(c: Condition): string {
  if (!isPlainObject(c)) return `equals ${preview(c, 60)}`;
  return Object.entries(c)
    .filter(([k]) => k !== 'ignoreCase')
    .map(([k, v]) => `${k} ${preview(v, 60)}`)
    .join(' and ');
}

/**
 * Conditions on fields of `target` (paths relative to it). A path that names several places
 * holds when one of them satisfies the condition; a path that names none is matched as missing.
 */
export function matchFields(conditions: FieldConditions, target: unknown, scope: OperandScope): MatchOutcome {
  const reasons: string[] = [];
  for (const [path, cond] of Object.entries(conditions)) {
    const found = resolvePath(target, path);
    if (found.length === 0) {
      const outcome = matchValue(cond, undefined, scope);
      if (!outcome.ok) return { ok: false, why: `${path} ${outcome.why}` };
      reasons.push(`${path} ${outcome.why}`);
      continue;
    }
    let last: MatchOutcome | undefined;
    for (const { value } of found) {
      last = matchValue(cond, value, scope);
      if (last.ok) break;
    }
    if (!last!.ok) return { ok: false, why: `${path} ${last!.why}` };
    reasons.push(`${path} ${last!.why}`);
  }
  return { ok: true, why: reasons.join('; ') };
}
