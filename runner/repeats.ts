import { runCase, type RunCaseOptions, type RunCaseResult } from './run-case.js';
import { repeatSeed } from '../engine/seed.js';

export interface RunRepeatsOptions extends Omit<RunCaseOptions, 'repeat' | 'seed'> {
  /** Runs of the case (default: the case's `repeats`, else 1). */
  repeats?: number;
  /** Base seed the per-repeat seeds derive from (default 0). */
  baseSeed?: number;
}

/**
 * Runs one case under one threat model k times, one after the other, each with its own seed
 * (`repeatSeed(baseSeed, caseId, r)`) and its own record (`<case>--<threat model>--r<r>.json`).
 */
export async function runCaseRepeats(options: RunRepeatsOptions): Promise<RunCaseResult[]> {
  const k = options.repeats ?? options.spec.repeats ?? 1;
  const results: RunCaseResult[] = [];
  for (let repeat = 0; repeat < k; repeat++) {
    results.push(await runCase({ ...options, repeat, seed: repeatSeed(options.baseSeed ?? 0, options.spec.id, repeat) }));
  }
  return results;
}
