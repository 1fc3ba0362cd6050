import { deepEqual, isPlainObject } from '../../engine/json.js';
import { ITEM_KEY } from '../../engine/state-items.js';

/** One difference between the initial and the final snapshot of a run. */
export interface StateChange {
  /** Where, in the engine's path syntax: `notes.outbox[0].to`, `email.inbox[id="m-3"]`. */
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

function keyPath(base: string, key: string): string {
  if (IDENTIFIER.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}

/**
 * Arrays of objects that all carry a distinct identity — `$key` (a database row's primary key or
 * rowid), else `id` — are matched by it, so an insertion is one change, not a shift of every later item.
 */
function idsOf(items: unknown[], field: string): Map<string, unknown> | undefined {
  const ids = new Map<string, unknown>();
  for (const item of items) {
    if (!isPlainObject(item)) return undefined;
    const id = item[field];
    if (typeof id !== 'string' && typeof id !== 'number') return undefined;
    const key = String(id);
    if (ids.has(key)) return undefined;
    ids.set(key, item);
  }
  return ids;
}

/**
 * The changes that turn `before` into `after`, deepest first where the shapes agree: a changed
 * field is reported at its own path, an added or removed item or key once, at its own path.
 */
export function diffState(before: unknown, after: unknown, path = ''): StateChange[] {
  const out: StateChange[] = [];
  walk(before, after, path, out);
  return out;
}

function walk(before: unknown, after: unknown, path: string, out: StateChange[]): void {
  if (before === after) return;
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const key of Object.keys(before)) {
      const p = keyPath(path, key);
      if (!(key in after)) out.push({ path: p, kind: 'removed', before: before[key] });
      else walk(before[key], after[key], p, out);
    }
    for (const key of Object.keys(after)) {
      if (!(key in before)) out.push({ path: keyPath(path, key), kind: 'added', after: after[key] });
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const field = [...before, ...after].some((item) => isPlainObject(item) && ITEM_KEY in item) ? ITEM_KEY : 'id';
    const beforeIds = idsOf(before, field);
    const afterIds = beforeIds && idsOf(after, field);
    if (beforeIds && afterIds && (beforeIds.size > 0 || afterIds.size > 0)) {
      for (const [id, item] of beforeIds) {
        const p = `${path}[${field}=${JSON.stringify(id)}]`;
        if (!afterIds.has(id)) out.push({ path: p, kind: 'removed', before: item });
        else walk(item, afterIds.get(id), p, out);
      }
      for (const [id, item] of afterIds) {
        if (!beforeIds.has(id)) out.push({ path: `${path}[${field}=${JSON.stringify(id)}]`, kind: 'added', after: item });
      }
      return;
    }
    const shared = Math.min(before.length, after.length);
    for (let i = 0; i < shared; i++) walk(before[i], after[i], `${path}[${i}]`, out);
    for (let i = shared; i < before.length; i++) out.push({ path: `${path}[${i}]`, kind: 'removed', before: before[i] });
    for (let i = shared; i < after.length; i++) out.push({ path: `${path}[${i}]`, kind: 'added', after: after[i] });
    return;
  }
  if (!deepEqual(before, after)) out.push({ path: path || '(root)', kind: 'changed', before, after });
}
