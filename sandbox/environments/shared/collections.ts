import { z } from 'zod';

/** Listing, searching and ordering the items of an environment's collections. */

/** Most items a list tool returns in one call. */
export const MAX_LIST_LIMIT = 200;

/** The `limit` argument of list tools: 1 to MAX_LIST_LIMIT, optional (each tool has its default). */
export function limitArg(description: string) {
  return z.int().min(1).max(MAX_LIST_LIMIT).optional().describe(description);
}

/** Code-unit order of two strings (ISO 8601 times sort chronologically this way). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A copy of `items` sorted by `key`, ascending; items with equal keys keep their order. */
export function sortedBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => compareText(key(a), key(b)));
}

/** True when one of `texts` contains `query`, case-insensitively. */
export function matchesQuery(query: string, ...texts: string[]): boolean {
  const q = query.toLowerCase();
  return texts.some((text) => text.toLowerCase().includes(q));
}
