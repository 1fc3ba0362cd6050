import { preview } from './json.js';
import type { OperandScope } from './operands.js';
import { explainMissing, resolvePath } from './paths.js';
import type { Condition, CountBounds, StateMatcher } from './predicate-schema.js';
import { evaluateAggregate } from './state-aggregate.js';
import { describeSelection, selectItems, type Item, type Selected, type Snapshots } from './state-items.js';
import { evaluateSet } from './state-sets.js';
import { matchValue } from './value-matcher.js';
import type { PredicateResult } from './verifier.js';

export function withinCount(n: number, count: CountBounds | undefined): boolean {
  const c = count ?? { min: 1 };
  if (c.equals !== undefined && n !== c.equals) return false;
  if (c.min !== undefined && n < c.min) return false;
  if (c.max !== undefined && n > c.max) return false;
  return true;
}

export function describeCount(count: CountBounds | undefined): string {
  const c = count ?? { min: 1 };
  if (c.equals !== undefined) return `exactly ${c.equals}`;
  if (c.min !== undefined && c.max !== undefined) return `${c.min}–${c.max}`;
  if (c.max !== undefined) return `at most ${c.max}`;
  return `at least ${c.min}`;
}

/** `state`: one value at a path, or the items of a collection — quantified, counted, aggregated or compared as a set. */
export function evaluateState(m: StateMatcher, snapshots: Snapshots, scope: OperandScope, at: string): PredicateResult {
  if (m.value !== undefined) return evaluateValue(m, m.value, snapshots, scope, at);
  const selected = selectItems(m, snapshots, scope);
  const selection = describeSelection(m, selected.matching.length);
  if (m.aggregate) return evaluateAggregate(m.aggregate, selected.matching, selection, scope, at);
  if (m.set) return evaluateSet(m.set, m, selected.matching, snapshots, scope, at);
  // A path that names nothing in either snapshot is a typo more often than an empty collection: say where it stops.
  const missing =
    selected.items.length === 0 && resolvePath(snapshots.final, m.path).length === 0 && resolvePath(snapshots.initial, m.path).length === 0
      ? explainMissing(snapshots.final, m.path)?.message
      : undefined;
  return evaluateQuantified(m, selected, at, missing);
}

function evaluateValue(m: StateMatcher, condition: Condition, snapshots: Snapshots, scope: OperandScope, at: string): PredicateResult {
  const snapshot = m.scope === 'initial' ? snapshots.initial : snapshots.final;
  const found = resolvePath(snapshot, m.path);
  const candidates = found.length ? found : [{ path: m.path, value: undefined }];
  let outcome = { ok: false, why: '' };
  let where = m.path;
  for (const c of candidates) {
    outcome = matchValue(condition, c.value, scope);
    where = c.path;
    if (outcome.ok) break;
  }
  const missing = found.length === 0 && !outcome.ok ? explainMissing(snapshot, m.path)?.message : undefined;
  const message = `${m.scope === 'initial' ? 'initial ' : ''}state ${where} ${outcome.why}${missing ? ` — the path names nothing: ${missing}` : ''}`;
  return { holds: outcome.ok, evidence: [{ at, holds: outcome.ok, message, paths: [where] }] };
}

function evaluateQuantified(m: StateMatcher, { items, matching, outcomes }: Selected, at: string, missing?: string): PredicateResult {
  const quantifier = m.quantifier ?? (m.count ? undefined : 'some');
  let holds: boolean;
  let wanted: string;
  if (quantifier === 'none') {
    holds = matching.length === 0;
    wanted = 'none wanted';
  } else if (quantifier === 'all') {
    // "all" over an empty collection would hold on a sandbox where nothing exists: refused.
    holds = items.length > 0 && matching.length === items.length;
    wanted = `all ${items.length} wanted`;
  } else if (quantifier === 'some') {
    holds = matching.length > 0;
    wanted = 'at least 1 wanted';
  } else {
    holds = withinCount(matching.length, m.count);
    wanted = `${describeCount(m.count)} wanted`;
  }
  const scopeWord = m.scope && m.scope !== 'final' ? `${m.scope} ` : '';
  const misses = items.filter((i) => !matching.includes(i));
  const shown = (quantifier === 'all' && !holds ? misses : matching).slice(0, 3);
  let message = `${matching.length} of ${items.length} ${scopeWord}item${items.length === 1 ? '' : 's'} at ${m.path}${m.where ? ' matched' : ''} (${wanted})`;
  if (quantifier === 'all' && items.length === 0) message += ': there are none, and "all" of nothing does not hold';
  if (items.length === 0 && missing) message += ` — the path names nothing: ${missing}`;
  if (shown.length) message += `: ${shown.map((i) => `${i.path} = ${preview(i.value, 90)}`).join(', ')}`;
  if (m.where && quantifier === 'all' && !holds && misses.length > 0) message += ` — ${misses[0]!.path}: ${outcomes.get(misses[0]!)!.why}`;
  else if (m.where && matching.length > 0) message += ` — ${outcomes.get(matching[0]!)!.why}`;
  // Too few matched: say which item came closest, and which condition it failed.
  const needed = quantifier === 'some' ? 1 : quantifier === undefined ? (m.count?.equals ?? m.count?.min ?? 0) : 0;
  const tooFew = !holds && matching.length < needed;
  if (m.where && tooFew && misses.length > 0) message += `; ${closest(misses, outcomes)}`;
  return { holds, evidence: [{ at, holds, message, paths: shown.map((i) => i.path) }] };
}

/** The item that satisfied the most `where` conditions (the first of equals), and what it failed. */
function closest(misses: readonly Item[], outcomes: Selected['outcomes']): string {
  let best = misses[0]!;
  for (const item of misses) if (outcomes.get(item)!.held > outcomes.get(best)!.held) best = item;
  const o = outcomes.get(best)!;
  return `closest: ${best.path} = ${preview(best.value, 90)} (${o.held} of ${o.total} conditions held) failed ${o.failed.join('; ')}`;
}
