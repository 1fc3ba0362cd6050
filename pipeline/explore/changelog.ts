import { toYaml, writeFileAtomic } from '../yaml-file.js';
import type { ExploreResult } from './explore.js';
import type { ChangeOperation, ChangelogEntry } from './operations.js';

/**
 * A run's changelog as YAML: what was read, every operation with its node and sources, the
 * frontier, and why the run stopped. No clock times and no absolute paths, so two runs given the
 * same model replies write the same bytes.
 */
export function changelogYaml(result: ExploreResult, run: { model: string; budget: number; threshold: number }): string {
  return toYaml(
    {
      schema: 'vera.explore-changelog/v1',
      model: run.model,
      budget: run.budget,
      threshold: run.threshold,
      retrieved: result.retrieved,
      iterations: result.iterations,
      stopReason: result.stopReason,
      counts: countOperations(result.changelog),
      nextFrontier: result.frontier,
      ...(result.recordQueries.length
        ? { fromRecords: result.recordQueries.map((q) => ({ query: q.query, reason: q.reason, node: `${q.tree}:${q.node}`, detail: q.detail })) }
        : {}),
      // Which possible duplicates the summary agent was shown, and which a merge confirmed.
      ...(result.mergeCandidates.length
        ? {
            mergeCandidates: result.mergeCandidates.map((c) => ({
              tree: c.tree,
              node: c.node,
              other: c.other,
              similarity: c.similarity,
              shown: c.shown,
              ...(c.confirmedBy ? { confirmedBy: c.confirmedBy } : {}),
            })),
          }
        : {}),
      entries: result.changelog.map(orderedEntry),
    },
    ' vera explore changelog: one entry per operation (node, sources), in the order applied.',
  );
}

export async function writeChangelog(file: string, result: ExploreResult, run: { model: string; budget: number; threshold: number }): Promise<void> {
  await writeFileAtomic(file, changelogYaml(result, run));
}

export function countOperations(entries: ChangelogEntry[]): Partial<Record<ChangeOperation, number>> {
  const counts: Partial<Record<ChangeOperation, number>> = {};
  for (const e of entries) counts[e.operation] = (counts[e.operation] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function orderedEntry(e: ChangelogEntry): Record<string, unknown> {
  return {
    iteration: e.iteration,
    operation: e.operation,
    ...(e.tree ? { tree: e.tree } : {}),
    ...(e.node ? { node: e.node } : {}),
    ...(e.into ? { into: e.into } : {}),
    sources: e.sources,
    detail: e.detail,
  };
}
