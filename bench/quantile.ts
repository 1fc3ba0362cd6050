/** The `q`-quantile of `xs` (nearest rank below: q = 0.5 is the lower median); NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))]! : Number.NaN;
}
