/** ` (witnesses 2, observable 1)`: how many of each, most first; empty for none. */
export function countsBy(keys: readonly string[]): string {
  if (keys.length === 0) return '';
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return ` (${[...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')})`;
}
