import { parseCaseSuiteSource, type CaseSuiteLoadResult } from '../engine/case-loader.js';

const cache = new Map<string, { source: string; result: CaseSuiteLoadResult }>();

/**
 * Parses a case file once per content: the run planner (before the pool starts) and the
 * transform (when the worker imports the file) both need it, in the same process.
 */
export function parseCaseFileCached(file: string, source: string): CaseSuiteLoadResult {
  const hit = cache.get(file);
  if (hit && hit.source === source) return hit.result;
  const result = parseCaseSuiteSource(source, file);
  cache.set(file, { source, result });
  return result;
}
