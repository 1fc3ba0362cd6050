import type { JsonModel } from '../llm/json-model.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import { isRecordSource, treeKinds } from '../taxonomy/taxonomy-schema.js';
import type { Change } from './operations.js';
import type { RecordQuery } from './records-feedback.js';
import { FRONTIER_SYSTEM_PROMPT, frontierResponse } from './summary-agent.js';

/** What the frontier planner sees: where the trees are thin and what is still unplaced. */
export interface FrontierInput {
  sparse: Array<{ node: string; name: string; sources: number }>;
  pending: Array<{ node: string; name: string; sources: number }>;
  unresolved: string[];
  alreadyQueried: string[];
  /** Queries derived from safety records (`--records`) not run yet, with what happened; absent without records. */
  fromRecords?: Array<{ query: string; node: string; what: string }>;
}

/**
 * Nodes with fewer than `threshold` documentary sources (fewest first; safety records do not
 * make a branch less sparse, as they do not count toward a leaf), the pending list, unresolved
 * terms, and the records' queries not yet run.
 */
export function frontierInput(
  taxonomy: Taxonomy,
  unresolved: string[],
  used: string[],
  threshold: number,
  options: { records?: RecordQuery[]; sparseLimit?: number } = {},
): FrontierInput {
  const sparse: FrontierInput['sparse'] = [];
  const pending: FrontierInput['pending'] = [];
  for (const kind of treeKinds) {
    for (const { path, node } of taxonomy.walk(kind)) {
      const documents = node.evidence.filter((id) => !isRecordSource(id)).length;
      if (documents < threshold) sparse.push({ node: `${kind}:${path}`, name: node.name, sources: documents });
    }
    for (const p of taxonomy.trees[kind].pending) pending.push({ node: `${kind}:${p.path}`, name: p.name, sources: p.evidence.length });
  }
  sparse.sort((a, b) => a.sources - b.sources || (a.node < b.node ? -1 : 1));
  const ran = new Set(used.map((q) => q.trim().toLowerCase()));
  const fromRecords = (options.records ?? [])
    .filter((q) => !ran.has(q.query.toLowerCase()))
    .map((q) => ({ query: q.query, node: `${q.tree}:${q.node}`, what: q.detail }));
  return {
    sparse: sparse.slice(0, options.sparseLimit ?? 8),
    pending,
    unresolved: [...unresolved],
    alreadyQueried: [...used],
    ...(fromRecords.length ? { fromRecords } : {}),
  };
}

/**
 * The next queries: the model's proposals, minus queries already run, at most `max`. If the model's
 * reply is invalid, the computed frontier (unresolved terms, pending names, sparse node names)
 * stands in, and the changelog says so.
 */
export async function proposeFrontier(model: JsonModel, input: FrontierInput, max: number): Promise<{ queries: string[]; changes: Change[] }> {
  const reply = await model.ask({ system: FRONTIER_SYSTEM_PROMPT, user: JSON.stringify(input, null, 1), schema: frontierResponse, name: 'frontier_queries' });
  const changes: Change[] = [];
  let proposed: string[];
  let origin: string;
  if (reply.ok) {
    proposed = reply.value.queries;
    origin = 'proposed by the summary agent';
  } else {
    changes.push({ operation: 'invalid-reply', sources: [], detail: `frontier reply rejected: ${reply.error}` });
    proposed = computedFrontier(input);
    origin = `computed from ${input.fromRecords?.length ? "the safety records' queries, " : ''}unresolved terms, pending candidates and sparse branches (the reply was invalid)`;
  }
  const queries = dedupeQueries(proposed, input.alreadyQueried).slice(0, max);
  changes.push({ operation: 'frontier', sources: [], detail: `${queries.length ? queries.map((q) => JSON.stringify(q)).join(', ') : 'empty'} — ${origin}` });
  return { queries, changes };
}

export function computedFrontier(input: FrontierInput): string[] {
  return [...(input.fromRecords ?? []).map((r) => r.query), ...input.unresolved, ...input.pending.map((p) => p.name), ...input.sparse.map((s) => s.name)];
}

export function dedupeQueries(queries: string[], used: string[]): string[] {
  const seen = new Set(used.map((q) => q.trim().toLowerCase()));
  const out: string[] = [];
  for (const q of queries) {
    const key = q.trim().toLowerCase();
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(q.trim());
  }
  return out;
}
