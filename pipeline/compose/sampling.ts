/**
 * Seeded sampling: the same seed and key always pick the same items, on every machine, so a
 * compose run is reproducible and a different seed explores other environments.
 */

/** FNV-1a over the key, then mulberry32: a small, well-mixed PRNG in [0, 1). */
export function seededRandom(key: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  let state = h >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Up to `k` items of `items` in a seeded random order (Fisher–Yates on a copy). */
export function sample<T>(items: readonly T[], k: number, key: string): T[] {
  const copy = [...items];
  const random = seededRandom(key);
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, Math.max(0, k));
}
