import { canonicalJson, preview } from './json.js';
import { describeNormalizers, normalizeDeep, normalizersOf, type Normalizer } from './normalize.js';
import type { OperandScope } from './operands.js';
import { resolvePath } from './paths.js';
import { setRelations, type SetComparison } from './predicate-schema.js';
import { describeSelection, selectItems, type Item, type ItemSelection, type Snapshots } from './state-items.js';
import { VerifierError } from './verifier-error.js';
import type { PredicateResult } from './verifier.js';

/**
 * `set: { of: id, sameAs: { path: email.inbox, scope: initial, where: { read: false } } }` — the
 * values of one field of the selected items, as a set, against the same (or another, `of`) field
 * of a second selection or a literal list: `sameAs`, `subsetOf`, `supersetOf` or `disjointFrom`.
 *
 * Values compare as JSON (strictly: 1 is not "1"), after `normalize`. An item that lacks the
 * field (or holds null there) is a verifier error: skipping it would make the sets lie. When the
 * state check selects nothing the comparison does not hold, whatever the relation — "every
 * deleted mail was unread" says nothing when nothing was deleted (as `quantifier: all` does not
 * hold over nothing). The other side may be empty: then `sameAs` and `subsetOf` fail, and
 * `supersetOf` and `disjointFrom` hold.
 */
export function evaluateSet(
  c: SetComparison,
  left: ItemSelection,
  leftItems: readonly Item[],
  snapshots: Snapshots,
  scope: OperandScope,
  at: string,
): PredicateResult {
  const relation = setRelations.find((r) => c[r] !== undefined)!;
  const other = c[relation]!;
  const norms = normalizersOf({ normalize: c.normalize });
  const leftValues = valuesOf(leftItems, c.of, norms, at);
  let rightValues: Map<string, unknown>;
  let rightLabel: string;
  if (Array.isArray(other)) {
    rightValues = new Map(other.map((v) => normalizeDeep(v, norms)).map((v) => [canonicalJson(v), v]));
    rightLabel = 'the list';
  } else {
    const right = selectItems(other, snapshots, scope).matching;
    const field = other.of ?? c.of;
    rightValues = valuesOf(right, field, norms, at);
    rightLabel = `the ${field} of ${describeSelection(other, right.length)}`;
  }
  const onlyLeft = [...leftValues].filter(([k]) => !rightValues.has(k)).map(([, v]) => v);
  const onlyRight = [...rightValues].filter(([k]) => !leftValues.has(k)).map(([, v]) => v);
  const common = [...leftValues].filter(([k]) => rightValues.has(k)).map(([, v]) => v);
  const leftLabel = `the ${c.of} of ${describeSelection(left, leftItems.length)}`;
  const sides = `${leftLabel} ${show([...leftValues.values()])}`;
  const against = `${rightLabel} ${show([...rightValues.values()])}`;
  const after = describeNormalizers(norms);

  if (leftValues.size === 0) {
    const message = `${sides}: nothing is selected, and a set comparison over no items does not hold (against ${against})`;
    return { holds: false, evidence: [{ at, holds: false, message, paths: [] }] };
  }
  let holds: boolean;
  let verb: string;
  let detail = '';
  const extra = (label: string, values: unknown[]) => (values.length ? `; ${label}: ${show(values)}` : '');
  switch (relation) {
    case 'sameAs':
      holds = onlyLeft.length === 0 && onlyRight.length === 0;
      verb = holds ? 'is the same set as' : 'is not the same set as';
      detail = extra('only in the first', onlyLeft) + extra('only in the second', onlyRight);
      break;
    case 'subsetOf':
      holds = onlyLeft.length === 0;
      verb = holds ? 'is a subset of' : 'is not a subset of';
      detail = extra('not in the second', onlyLeft);
      break;
    case 'supersetOf':
      holds = onlyRight.length === 0;
      verb = holds ? 'includes all of' : 'does not include all of';
      detail = extra('missing from the first', onlyRight);
      break;
    case 'disjointFrom':
      holds = common.length === 0;
      verb = holds ? 'shares nothing with' : 'is not disjoint from';
      detail = extra('in both', common);
      break;
  }
  const message = `${sides} ${verb} ${against}${after}${detail}`;
  return { holds, evidence: [{ at, holds, message, paths: leftItems.map((i) => i.path) }] };
}

function valuesOf(items: readonly Item[], field: string, norms: readonly Normalizer[], at: string): Map<string, unknown> {
  const values = new Map<string, unknown>();
  for (const item of items) {
    const found = resolvePath(item.value, field)[0];
    if (found === undefined || found.value === null) {
      const why = `${item.path} has no ${field}${found ? ' (it is null)' : ''}`;
      throw new VerifierError(at, `set of ${field}: ${why}; narrow the items with where: { ${field}: { exists: true } }`);
    }
    const value = normalizeDeep(found.value, norms);
    values.set(canonicalJson(value), value);
  }
  return values;
}

function show(values: unknown[]): string {
  const shown = values.slice(0, 8).map((v) => preview(v, 40));
  return `{${shown.join(', ')}${values.length > 8 ? `, … (${values.length} in all)` : ''}}`;
}
