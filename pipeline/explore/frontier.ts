import type { JsonModel } from '../llm/json-model.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import { treeKinds } from '../taxonomy/taxonomy-schema.js';
import type { Change } from './operations.js';
import { FRONTIER_SYSTEM_PROMPT, frontierResponse } from './summary-agent.js';

/** What the frontier planner sees: where the trees are thin and what is still unplaced. */
export interface FrontierInput {
  sparse: Array<{ node: string; name: string; sources: number }>;
  pending: Array<{ node: string; name: string; sources: number }>;
  unresolved: string[];
  alreadyQueried: string[];
}

/** Nodes with fewer than `threshold` sources (fewest first), the pending list and unresolved terms. */
export function frontierInput(taxonomy: Taxonomy, unresolved: string[], used: string[], threshold: number, sparseLimit = 8): FrontierInput {
  const sparse: FrontierInput['sparse'] = [];
  const pending: FrontierInput['pending'] = [];
  for (const kind of treeKinds) {
    for (const { path, node } of taxonomy.walk(kind)) {
      if (node.evidence.length < threshold) sparse.push({ node: `${kind}:${path}`, name: node.name, sources: node.evidence.length });
    }
    for (const p of taxonomy.trees[kind].pending) pending.push({ node: `${kind}:${p.path}`, name: p.name, sources: p.evidence.length });
  }
  sparse.sort((a, b) => a.sources - b.sources || (a.node < b.node ? -1 : 1));
  return { sparse: sparse.slice(0, sparseLimit), pending, unresolved: [...unresolved], alreadyQueried: [...used] };
}

/**
 * The next queries: the model's proposals, minus queries already run, at most `max`. If the model's
 * reply is invalid, the computed frontier (unresolved terms, pending names, sparse node names)
 * stands in, and the changelog says so.
 */
export async function proposeFrontier(model: JsonModel, input: FrontierInput, max: number): Promise<{ queries: string[]; changes: Change[] }> {
  const reply = await model.ask({ system: FRONTIER_SYSTEM_PROMPT, user: JSON.stringify(input, null, 1), schema: frontierResponse });
  const changes: Change[] = [];
  let proposed: string[];
  let origin: string;
  if (reply.ok) {
    proposed = reply.value.queries;
    origin = 'proposed by the summary agent';
  } else {
    changes.push({ operation: 'invalid-reply', sources: [], detail: `frontier reply rejected: ${reply.error}` });
    proposed = computedFrontier(input);
    origin = 'computed from unresolved terms, pending candidates and sparse branches (the reply was invalid)';
  }
  const queries = dedupeQueries(proposed, input.alreadyQueried).slice(0, max);
  changes.push({ operation: 'frontier', sources: [], detail: `${queries.length ? queries.map((q) => JSON.stringify(q)).join(', ') : 'empty'} — ${origin}` });
  return { queries, changes };
}

export function computedFrontier(input: FrontierInput): string[] {
  return [...input.unresolved, ...input.pending.map((p) => p.name), ...input.sparse.map((s) => s.name)];
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
