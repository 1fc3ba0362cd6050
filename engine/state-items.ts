import { deepEqual, isPlainObject, toText } from './json.js';
import { matchFields, type FieldsOutcome } from './field-conditions.js';
import type { OperandScope } from './operands.js';
import { entriesOf, parsePath, resolvePath } from './paths.js';
import type { FieldConditions, StateScope } from './predicate-schema.js';

/**
 * The field an item of a collection may carry its identity in, when no `id` says it (the database
 * environment's rows: their primary key or rowid). Items are told apart across snapshots by `key:`
 * when a check names one, else by this field, else by `id`, and only then by their content.
 */
export const ITEM_KEY = '$key';

/** One item of a collection in a snapshot: where it is, what identifies it across snapshots, and its value. */
export interface Item {
  path: string;
  identity: string;
  value: unknown;
}

/** What a `state` check (or the other side of a set comparison) selects. */
export interface ItemSelection {
  path: string;
  scope?: StateScope | undefined;
  key?: string | undefined;
  where?: FieldConditions | undefined;
}

export interface Snapshots {
  initial: unknown;
  final: unknown;
}

export interface Selected {
  /** Every item in scope. */
  items: Item[];
  /** The items that satisfy `where` (all of them without one). */
  matching: Item[];
  /** Each item's `where` outcome, for near-miss evidence. */
  outcomes: Map<Item, FieldsOutcome>;
}

/**
 * Where a collection is, said so that it survives changes elsewhere: each array position on the
 * way that holds an item with an `id` is named by that id (`buckets[id="b"].objects`, not
 * `buckets[2].objects`). Otherwise deleting an earlier bucket would move this one, and every
 * object in it would look removed from the old position and added at the new one.
 */
function stableContainer(root: unknown, concrete: string): string {
  if (concrete === '' || concrete === '$') return concrete;
  let value = root;
  let out = '';
  for (const segment of parsePath(concrete)) {
    const index =
      segment.kind === 'index' ? segment.index : segment.kind === 'key' && Array.isArray(value) && /^\d+$/.test(segment.key) ? Number(segment.key) : undefined;
    if (index !== undefined && Array.isArray(value)) {
      const element: unknown = value[index];
      if (isPlainObject(element) && ITEM_KEY in element) out += `[${ITEM_KEY}=${JSON.stringify(toText(element[ITEM_KEY]))}]`;
      else out += isPlainObject(element) && 'id' in element ? `[id=${JSON.stringify(toText(element.id))}]` : `[${index}]`;
      value = element;
    } else if (segment.kind === 'key') {
      out += out ? `.${segment.key}` : segment.key;
      value = isPlainObject(value) ? value[segment.key] : undefined;
    } else return concrete;
  }
  return out;
}

function collectionItems(root: unknown, path: string, key: string | undefined): Item[] {
  const items: Item[] = [];
  // Equal identities (items told apart by content, or two rows with one key) are counted, not
  // merged: the second equal row added is added, the one of two equal rows deleted is removed.
  const seen = new Map<string, number>();
  const occurrence = (identity: string) => {
    const n = (seen.get(identity) ?? 0) + 1;
    seen.set(identity, n);
    return n === 1 ? identity : `${identity}\u0000${n}`;
  };
  for (const match of resolvePath(root, path)) {
    const isArray = Array.isArray(match.value);
    const container = stableContainer(root, match.path);
    for (const [k, v] of entriesOf(match.value)) {
      let identity: string;
      if (!isArray) identity = `${container}#${String(k)}`;
      else if (isPlainObject(v) && key && resolvePath(v, key).length > 0) identity = `${container}#${toText(resolvePath(v, key)[0]!.value)}`;
      else if (isPlainObject(v) && !key && ITEM_KEY in v) identity = `${container}#${toText(v[ITEM_KEY])}`;
      else if (isPlainObject(v) && !key && 'id' in v) identity = `${container}#${toText(v.id)}`;
      else identity = `${container}#${toText(v)}`;
      identity = occurrence(identity);
      items.push({
        path: isArray ? `${match.path}[${String(k)}]` : `${match.path}${/^[A-Za-z_$][\w$-]*$/.test(String(k)) ? `.${String(k)}` : `[${JSON.stringify(k)}]`}`,
        identity,
        value: v,
      });
    }
  }
  return items;
}

export function scopedItems(m: ItemSelection, snapshots: Snapshots): Item[] {
  const scope = m.scope ?? 'final';
  if (scope === 'final') return collectionItems(snapshots.final, m.path, m.key);
  if (scope === 'initial') return collectionItems(snapshots.initial, m.path, m.key);
  const before = collectionItems(snapshots.initial, m.path, m.key);
  const after = collectionItems(snapshots.final, m.path, m.key);
  const beforeById = new Map(before.map((i) => [i.identity, i]));
  const afterById = new Map(after.map((i) => [i.identity, i]));
  if (scope === 'added') return after.filter((i) => !beforeById.has(i.identity));
  // Removed items exist only in the initial snapshot: their paths say so.
  if (scope === 'removed') return before.filter((i) => !afterById.has(i.identity)).map((i) => ({ ...i, path: `initial ${i.path}` }));
  return after.filter((i) => {
    const old = beforeById.get(i.identity);
    return old !== undefined && !deepEqual(old.value, i.value);
  });
}

export function selectItems(m: ItemSelection, snapshots: Snapshots, scope: OperandScope): Selected {
  const items = scopedItems(m, snapshots);
  const outcomes = new Map<Item, FieldsOutcome>();
  if (!m.where) return { items, matching: items, outcomes };
  const matching: Item[] = [];
  for (const item of items) {
    const outcome = matchFields(m.where, item.value, scope);
    outcomes.set(item, outcome);
    if (outcome.ok) matching.push(item);
  }
  return { items, matching, outcomes };
}

/** "the 2 added items at email.sent where to contains …" — how evidence names a selection. */
export function describeSelection(m: ItemSelection, count: number): string {
  const scopeWord = m.scope && m.scope !== 'final' ? `${m.scope} ` : '';
  const keys = Object.keys(m.where ?? {});
  const where = keys.length ? ` where ${keys.join(', ')} ${keys.length === 1 ? 'matches' : 'match'}` : '';
  return `${count} ${scopeWord}item${count === 1 ? '' : 's'} at ${m.path}${where}`;
}
