import { parseCaseSuiteSource, type CaseSuiteLoadResult, type LoadedCase } from '../engine/case-loader.js';

const cache = new Map<string, { source: string; result: CaseSuiteLoadResult }>();

/**
 * Parses a case file once per content: the run planner (before the pool starts) and the
 * transform (when the worker imports the file) both need it, in the same process.
 */
export function parseCaseFileCached(file: string, source: string): CaseSuiteLoadResult {
  const hit = cache.get(file);
  if (hit && hit.source === source) return hit.result;
  const result = withoutSyntaxTree(parseCaseSuiteSource(source, file), source, file);
  cache.set(file, { source, result });
  return result;
}

/**
 * The parse as the cache keeps it for the whole run: without the YAML syntax tree that `locate`
 * reads. The tree is 2.5× the parsed cases (241 of 338 MB for the library), and `locate` is
 * needed only to place a problem found after loading — rare — so it parses the file again then.
 */
function withoutSyntaxTree(result: CaseSuiteLoadResult, source: string, file: string): CaseSuiteLoadResult {
  if (!result.ok) return result;
  let again: LoadedCase[] | undefined;
  const cases = result.cases.map(
    (loaded, i): LoadedCase => ({
      ...loaded,
      locate: (path) => {
        if (!again) {
          const parsed = parseCaseSuiteSource(source, file);
          again = parsed.ok ? parsed.cases : [];
        }
        return again[i]?.locate(path) ?? { line: loaded.line, column: 1 };
      },
    }),
  );
  return { ok: true, cases };
}
