import { ToolError } from '../../environment.js';

/**
 * Stable ids for items of collection state (`msg-7`, `tx-3`): what `added` / `removed` /
 * `changed` state matchers key on. Generated ids never collide with ids an init script gave.
 */
export interface IdCounter {
  nextId: number;
}

/** The next free `<prefix>-<n>`, skipping any id in `taken`. */
export function takeId(state: IdCounter, prefix: string, taken: ReadonlySet<string>): string {
  let id: string;
  do id = `${prefix}-${state.nextId++}`;
  while (taken.has(id));
  return id;
}

/**
 * Claims an explicit id from an init script: refuses a duplicate, and moves the counter past a
 * numeric suffix (`tx-7` → next generated id is at least `…-8`) so generated ids stay clear of it.
 * `suffix` says which ids count as numbered (its first group is the number).
 */
export function reserveId(state: IdCounter, id: string, taken: ReadonlySet<string>, suffix: RegExp = /-(\d+)$/): void {
  if (taken.has(id)) throw new ToolError(`id "${id}" is already used`);
  const n = suffix.exec(id);
  if (n && Number(n[1]) >= state.nextId) state.nextId = Number(n[1]) + 1;
}

/** `explicit` when given (reserved, see `reserveId`), otherwise the next generated `<prefix>-<n>`. */
export function claimId(state: IdCounter, prefix: string, taken: ReadonlySet<string>, explicit?: string, suffix?: RegExp): string {
  if (explicit === undefined) return takeId(state, prefix, taken);
  reserveId(state, explicit, taken, suffix);
  return explicit;
}

/**
 * The id of a record about to be appended to `items`, for logs without a counter of their own
 * (shares, exports, gists, commands): `<prefix>-<items.length + 1>`, or the next number not in use.
 */
export function nextSerialId(items: ReadonlyArray<{ id: string }>, prefix: string): string {
  const taken = new Set(items.map((item) => item.id));
  let n = items.length + 1;
  while (taken.has(`${prefix}-${n}`)) n++;
  return `${prefix}-${n}`;
}

/** `date` as ISO 8601 (default: now); a ToolError naming the field when it is not a date. */
export function isoDate(date: string | undefined, field = 'date'): string {
  if (date === undefined) return new Date().toISOString();
  const parsed = new Date(date);
  if (Number.isNaN(parsed.getTime())) throw new ToolError(`${field} is not a date: ${JSON.stringify(date)}`);
  return parsed.toISOString();
}
