/**
 * Seeds for repeated runs. Each repeat of a case gets its own seed, derived from the run's base
 * seed, the case id and the repeat index, so the same configuration reproduces the same seeds
 * (and, with deterministic parts, the same runs), and repeats differ from one another. The seed
 * is recorded; LLM control agents send it with every model request.
 */
export function repeatSeed(base: number, caseId: string, repeat: number): number {
  // FNV-1a, 32 bits: tiny, stable across platforms and versions.
  let hash = 0x811c9dc5;
  for (const ch of `${base}:${caseId}:${repeat}`) {
    hash ^= ch.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
