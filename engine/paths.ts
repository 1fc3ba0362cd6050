import { VeraError } from './errors.js';
import { isPlainObject } from './json.js';

/**
 * Paths into JSON values, used by state matchers, argument matchers and injection targets.
 *
 *   email.mailboxes["alice@corp.example"].inbox[0].body
 *   files.entries.*.content          every value of a map or array
 *   email.inbox[from="boss@corp.example"].body   items whose field equals a string
 *
 * A path names zero or more places; `resolvePath` returns each with its canonical spelling,
 * which is what evidence shows. A filter compares the text of a scalar field (a string, a number
 * or a boolean): `[n=4]` selects items whose `n` is 4 or "4"; an item lacking the field, or whose
 * field is null (SQL NULL) or an object, is never selected — `[status=undefined]` selects nothing.
 */
export type PathSegment =
  | { kind: 'key'; key: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' }
  | { kind: 'filter'; field: string; value: string };

export interface PathMatch {
  path: string;
  value: unknown;
}

export class PathSyntaxError extends VeraError {
  constructor(
    readonly path: string,
    readonly column: number,
    detail: string,
  ) {
    super('PATH_INVALID', `invalid path ${JSON.stringify(path)} at column ${column + 1}: ${detail}`);
    this.name = 'PathSyntaxError';
  }
}

const cache = new Map<string, PathSegment[]>();

export function parsePath(path: string): PathSegment[] {
  const cached = cache.get(path);
  if (cached) return cached;
  const segments: PathSegment[] = [];
  let i = 0;
  const identifier = /[A-Za-z0-9_$@-]/;
  while (i < path.length) {
    const ch = path[i]!;
    if (ch === '.') {
      if (i === 0 || i === path.length - 1) throw new PathSyntaxError(path, i, 'a path cannot start or end with "."');
      i++;
      continue;
    }
    if (ch === '[') {
      const close = findClosingBracket(path, i);
      const inner = path.slice(i + 1, close).trim();
      segments.push(parseBracket(path, i, inner));
      i = close + 1;
      continue;
    }
    if (ch === '*') {
      segments.push({ kind: 'wildcard' });
      i++;
      continue;
    }
    let j = i;
    while (j < path.length && identifier.test(path[j]!)) j++;
    if (j === i) throw new PathSyntaxError(path, i, `unexpected character ${JSON.stringify(ch)}`);
    segments.push({ kind: 'key', key: path.slice(i, j) });
    i = j;
  }
  if (cache.size > 5000) cache.clear();
  cache.set(path, segments);
  return segments;
}

function findClosingBracket(path: string, open: number): number {
  let quote: string | null = null;
  for (let k = open + 1; k < path.length; k++) {
    const c = path[k]!;
    if (quote) {
      if (c === '\\') k++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ']') return k;
  }
  throw new PathSyntaxError(path, open, 'unclosed "["');
}

function unquote(path: string, at: number, text: string): string {
  const q = text[0];
  if ((q === '"' || q === "'") && text.endsWith(q) && text.length >= 2) {
    if (q === '"') {
      try {
        return JSON.parse(text) as string;
      } catch {
        throw new PathSyntaxError(path, at, `bad quoted key ${text}`);
      }
    }
    return text.slice(1, -1).replace(/\\'/g, "'");
  }
  return text;
}

function parseBracket(path: string, at: number, inner: string): PathSegment {
  if (inner === '*') return { kind: 'wildcard' };
  if (/^\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  if (inner.startsWith('"') || inner.startsWith("'")) return { kind: 'key', key: unquote(path, at, inner) };
  const eq = inner.indexOf('=');
  if (eq > 0) {
    const field = inner.slice(0, eq).trim();
    // `[status!=x]` used to read as a filter on a field named "status!", which nothing has: a
    // filter that silently selects nothing. Only equality is supported, on a plain field name.
    if (/[!<>]$/.test(field)) {
      const instead = 'use where: { field: { not: … } } or gt/lt';
      throw new PathSyntaxError(path, at, `a path filter only tests equality ([field=value]); for "${field.slice(-1)}=" ${instead}`);
    }
    if (!/^[A-Za-z0-9_$@-]+$/.test(field)) {
      throw new PathSyntaxError(path, at, `a path filter tests one plain field ([field=value]), not ${JSON.stringify(field)}`);
    }
    const value = unquote(path, at, inner.slice(eq + 1).trim());
    return { kind: 'filter', field, value };
  }
  if (inner.length === 0) throw new PathSyntaxError(path, at, 'empty "[]"');
  return { kind: 'key', key: inner };
}

function formatKey(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function join(base: string, key: string | number): string {
  const part = typeof key === 'number' ? `[${key}]` : formatKey(key);
  if (!base) return part.startsWith('.') ? part.slice(1) : part;
  return base + part;
}

/** The path written back from its segments, as evidence shows a prefix that names nothing. */
export function formatSegments(segments: readonly PathSegment[], base = ''): string {
  let out = base;
  for (const s of segments) {
    if (s.kind === 'key') out = join(out, s.key);
    else if (s.kind === 'index') out = join(out, s.index);
    else if (s.kind === 'wildcard') out += out ? '.*' : '*';
    else out += `[${s.field}=${JSON.stringify(s.value)}]`;
  }
  return out;
}

/** Every place the path names in `root`; a missing key yields no match (not `undefined`). */
export function resolvePath(root: unknown, path: string, base = ''): PathMatch[] {
  if (path === '' || path === '$') return [{ path: base || '$', value: root }];
  return resolveSegments(root, parsePath(path), base);
}

/** `resolvePath` over parsed segments; no segments name `root` itself. */
export function resolveSegments(root: unknown, segments: readonly PathSegment[], base = ''): PathMatch[] {
  if (segments.length === 0) return [{ path: base || '$', value: root }];
  let current: PathMatch[] = [{ path: base, value: root }];
  for (const segment of segments) {
    const next: PathMatch[] = [];
    for (const { path: at, value } of current) {
      switch (segment.kind) {
        case 'key':
          if (isPlainObject(value) && Object.hasOwn(value, segment.key)) {
            next.push({ path: join(at, segment.key), value: value[segment.key] });
          } else if (Array.isArray(value) && /^\d+$/.test(segment.key) && Number(segment.key) < value.length) {
            next.push({ path: join(at, Number(segment.key)), value: value[Number(segment.key)] });
          }
          break;
        case 'index':
          if (Array.isArray(value) && segment.index < value.length) {
            next.push({ path: join(at, segment.index), value: value[segment.index] });
          }
          break;
        case 'wildcard':
          for (const [k, v] of entriesOf(value)) next.push({ path: join(at, k), value: v });
          break;
        case 'filter':
          for (const [k, v] of entriesOf(value)) if (passesFilter(v, segment)) next.push({ path: join(at, k), value: v });
          break;
      }
    }
    current = next;
    if (current.length === 0) break;
  }
  return current;
}

/** Entries of a collection: array items by index, object values by key; nothing for scalars. */
export function entriesOf(value: unknown): Array<[string | number, unknown]> {
  if (Array.isArray(value)) return value.map((v, i) => [i, v]);
  if (isPlainObject(value)) return Object.entries(value);
  return [];
}

/**
 * Writes `replace(old)` at every place `path` names inside `root` (mutates `root`) whose parent
 * passes `accept`; returns how many places were written.
 */
export function replaceAtPath(root: unknown, path: string, replace: (old: unknown) => unknown, accept: (parent: unknown) => boolean = () => true): number {
  const segments = parsePath(path);
  if (segments.length === 0) return 0;
  const parents = resolveParents(root, segments.slice(0, -1));
  const last = segments[segments.length - 1]!;
  let count = 0;
  for (const parent of parents) {
    if (!accept(parent)) continue;
    for (const [k, v] of childEntries(parent, last)) {
      (parent as Record<string | number, unknown>)[k] = replace(v);
      count++;
    }
  }
  return count;
}

function resolveParents(root: unknown, segments: PathSegment[]): unknown[] {
  let current: unknown[] = [root];
  for (const segment of segments) {
    current = current.flatMap((value) => childEntries(value, segment).map(([, v]) => v));
  }
  return current;
}

function childEntries(value: unknown, segment: PathSegment): Array<[string | number, unknown]> {
  switch (segment.kind) {
    case 'key':
      if (isPlainObject(value) && Object.hasOwn(value, segment.key)) return [[segment.key, value[segment.key]]];
      if (Array.isArray(value) && /^\d+$/.test(segment.key) && Number(segment.key) < value.length) {
        return [[Number(segment.key), value[Number(segment.key)]]];
      }
      return [];
    case 'index':
      return Array.isArray(value) && segment.index < value.length ? [[segment.index, value[segment.index]]] : [];
    case 'wildcard':
      return entriesOf(value);
    case 'filter':
      return entriesOf(value).filter(([, v]) => passesFilter(v, segment));
  }
}

/** Whether an item passes `[field=value]`: it has the field, as a string, number or boolean whose text is `value`. */
function passesFilter(item: unknown, filter: { field: string; value: string }): boolean {
  if (!isPlainObject(item) || !Object.hasOwn(item, filter.field)) return false;
  const v = item[filter.field];
  return (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') && String(v) === filter.value;
}

/** Whether a segment may name several places (`*` or a filter): conditions that share one bind it to one element. */
export function selectsMany(segment: PathSegment): boolean {
  return segment.kind === 'wildcard' || segment.kind === 'filter';
}

/**
 * Why `path` names nothing in `root`, said at the first segment that finds nothing: `under
 * "email" there is no "trsut" (there are: inbox, sent, trust)`. Undefined when the path names
 * something. The keys listed are the ones at that place, for a reader (and "did you mean") to pick from.
 */
export function explainMissing(root: unknown, path: string): { message: string; missing: string; known: string[] } | undefined {
  if (path === '' || path === '$') return undefined;
  const segments = parsePath(path);
  let current: PathMatch[] = [{ path: '', value: root }];
  for (const [i, segment] of segments.entries()) {
    const next = resolveSegments(root, segments.slice(0, i + 1));
    if (next.length === 0) {
      const where = current[0]!.path || 'the snapshot';
      const keys = [...new Set(current.flatMap((c) => (isPlainObject(c.value) ? Object.keys(c.value) : [])))].sort();
      const missing = segment.kind === 'key' ? segment.key : formatSegments([segment]);
      const has =
        keys.length > 0
          ? ` (it has: ${keys.slice(0, 12).join(', ')}${keys.length > 12 ? ', …' : ''})`
          : Array.isArray(current[0]!.value)
            ? ` (it is a list of ${(current[0]!.value as unknown[]).length})`
            : current[0]!.value === undefined
              ? ''
              : ` (it is ${typeof current[0]!.value})`;
      return {
        message: `under ${where === 'the snapshot' ? where : JSON.stringify(where)} there is no ${JSON.stringify(missing)}${has}`,
        missing,
        known: keys,
      };
    }
    current = next;
  }
  return undefined;
}
