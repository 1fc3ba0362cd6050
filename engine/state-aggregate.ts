import { preview } from './json.js';
import type { OperandScope } from './operands.js';
import { resolvePath } from './paths.js';
import type { Aggregate } from './predicate-schema.js';
import type { Item } from './state-items.js';
import { matchValue } from './value-matcher.js';
import { VerifierError } from './verifier-error.js';
import type { PredicateResult } from './verifier.js';

/**
 * `aggregate: { sum: amount, value: { gt: 10 } }` — one number computed over the selected items
 * (`count`, or `sum`/`min`/`max` of a field), then matched by `value`.
 *
 * Every selected item must carry the field as a number: a missing field (a typo such as
 * `amonut`), null or text ("10.50") is a verifier error, not a value skipped — a sum that
 * silently skips items would understate, and `not` over it would hold. Narrow the selection with
 * `where` when some items legitimately lack the field. The sum of no items is 0; the min and max
 * of no items are missing (so `{ max: amount, value: { lte: 100 } }` does not hold on nothing).
 */
export function evaluateAggregate(a: Aggregate, items: readonly Item[], selection: string, scope: OperandScope, at: string): PredicateResult {
  if (a.count) {
    const outcome = matchValue(a.value, items.length, scope);
    const message = `count = ${items.length}: ${selection} — ${outcome.why}${listed(items.map((i) => i.path))}`;
    return { holds: outcome.ok, evidence: [{ at, holds: outcome.ok, message, paths: items.map((i) => i.path) }] };
  }
  const field = (a.sum ?? a.min ?? a.max)!;
  const kind = a.sum !== undefined ? 'sum' : a.min !== undefined ? 'min' : 'max';
  const numbers = items.map((item) => ({ item, value: numberAt(item, field, kind, at) }));
  let computed: number | undefined;
  let contributors = numbers;
  if (kind === 'sum') computed = exactSum(numbers.map((n) => n.value));
  else if (numbers.length > 0) {
    const pick = numbers.reduce((best, n) => ((kind === 'min' ? n.value < best.value : n.value > best.value) ? n : best));
    computed = pick.value;
    contributors = [pick];
  }
  const outcome = matchValue(a.value, computed, scope);
  const shown = contributors.map((n) => `${n.item.path} (${n.value})`);
  const value = computed === undefined ? 'missing (there are no items)' : String(computed);
  const message = `${kind} of ${field} = ${value} over ${selection} — ${outcome.why}${listed(shown)}`;
  return { holds: outcome.ok, evidence: [{ at, holds: outcome.ok, message, paths: contributors.map((n) => n.item.path) }] };
}

function numberAt(item: Item, field: string, kind: string, at: string): number {
  const found = resolvePath(item.value, field)[0];
  if (found === undefined) {
    throw new VerifierError(at, `${kind} of ${field}: ${item.path} has no field ${field} (narrow the items with where: { ${field}: { exists: true } })`);
  }
  if (typeof found.value !== 'number' || !Number.isFinite(found.value)) {
    throw new VerifierError(at, `${kind} of ${field}: ${item.path}.${found.path} is ${preview(found.value, 60)}, not a number`);
  }
  return found.value;
}

function listed(paths: string[]): string {
  if (paths.length === 0) return '';
  return `; from ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? `, … (${paths.length} in all)` : ''}`;
}

/** Places after the decimal point in the shortest text of `n`; Infinity for exponent notation. */
function decimals(n: number): number {
  const text = String(n);
  if (/e/i.test(text)) return Infinity;
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/**
 * A sum that is exact for decimal amounts: 3.3 + 6.7 is 10, not 10.000000000000002, so a bound
 * such as `gt: 10` means what the case says. Falls back to floating point for values with many
 * places or magnitudes where scaled integers would lose precision.
 */
export function exactSum(values: readonly number[]): number {
  const places = values.reduce((p, v) => Math.max(p, decimals(v)), 0);
  if (places === 0 || places > 12) return values.reduce((s, v) => s + v, 0);
  const scale = 10 ** places;
  let total = 0;
  for (const v of values) total += Math.round(v * scale);
  return Number.isSafeInteger(total) ? total / scale : values.reduce((s, v) => s + v, 0);
}
