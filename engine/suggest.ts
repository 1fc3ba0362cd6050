/**
 * "Did you mean": the known name closest to a mistyped one, when it is close enough to be the
 * intended one (an edit or two for short names, a few more for long ones).
 */

/** Edit distance with transpositions (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest of `known` to `wanted`, or undefined when none is close (case is ignored). */
export function closest(wanted: string, known: Iterable<string>): string | undefined {
  const w = wanted.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(w.length / 4)));
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    if (name === wanted) continue;
    const distance = editDistance(w, name.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** `; did you mean "read_email"?` — or nothing. */
export function didYouMean(wanted: string, known: Iterable<string>): string {
  const hit = closest(wanted, known);
  return hit === undefined ? '' : `; did you mean "${hit}"?`;
}
