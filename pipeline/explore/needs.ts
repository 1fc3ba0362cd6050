import { describeNeed } from '../capabilities.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import type { Need, NeedsProposal, PendingNode } from '../taxonomy/taxonomy-schema.js';
import type { Change } from './operations.js';

/**
 * `needs` of new nodes, proposed by several sources. A pending candidate keeps every distinct
 * proposal with the sources behind it; the leaf gets the needs that at least half of those
 * sources proposed. Why not a union: one outlier would make the leaf untestable in most
 * environments. Why not an intersection: one vague proposal would drop a real constraint and
 * make compose pair the leaf with environments where it cannot happen. A tie keeps the need —
 * a missing need widens compatibility silently, an extra one only narrows it visibly.
 */

/** Two needs are the same need whatever the order of their actions and resources. */
export function needKey(need: Need): string {
  return `${[...need.action].sort().join('|')} on ${need.resource ? [...need.resource].sort().join('|') : '*'}`;
}

function listKey(needs: Need[]): string {
  return [...new Set(needs.map(needKey))].sort().join(' & ');
}

/** The proposals of a candidate; one saved before proposals were kept counts as its first source's. */
export function proposalsOf(pending: PendingNode): NeedsProposal[] {
  if (pending.proposedNeeds) return pending.proposedNeeds;
  return pending.needs?.length ? [{ needs: pending.needs, sources: pending.evidence.slice(0, 1) }] : [];
}

/** Records that `source` proposed `needs` for the candidate and recomputes what the leaf would get. */
export function addNeedsProposal(pending: PendingNode, needs: Need[], source: string): void {
  if (needs.length === 0) return;
  const proposals = proposalsOf(pending).map((p) => ({ needs: p.needs, sources: [...p.sources] }));
  const key = listKey(needs);
  const same = proposals.find((p) => listKey(p.needs) === key);
  if (same) {
    if (!same.sources.includes(source)) same.sources.push(source);
  } else proposals.push({ needs, sources: [source] });
  pending.proposedNeeds = proposals;
  const agreed = agreedNeeds(proposals);
  if (agreed.length) pending.needs = agreed;
  else delete pending.needs;
}

/** The needs at least half of the proposing sources named, in the order they were first proposed. */
export function agreedNeeds(proposals: NeedsProposal[]): Need[] {
  const total = proposals.reduce((n, p) => n + p.sources.length, 0);
  const votes = new Map<string, { need: Need; sources: number }>();
  for (const p of proposals) {
    for (const need of dedupeNeeds(p.needs)) {
      const key = needKey(need);
      const entry = votes.get(key) ?? { need, sources: 0 };
      entry.sources += p.sources.length;
      votes.set(key, entry);
    }
  }
  return [...votes.values()].filter((v) => 2 * v.sources >= total).map((v) => v.need);
}

function dedupeNeeds(needs: Need[]): Need[] {
  const byKey = new Map<string, Need>();
  for (const need of needs) if (!byKey.has(needKey(need))) byKey.set(needKey(need), need);
  return [...byKey.values()];
}

/** `read on secret; egress on secret` — how needs read in prompts and the changelog. */
export function formatNeeds(needs: Need[]): string {
  return needs.map(describeNeed).join('; ');
}

/** Every node path of the risk and attack trees: taken before a run, to know which leaves it made. */
export function nodePaths(taxonomy: Taxonomy): Set<string> {
  const out = new Set<string>();
  for (const tree of ['risks', 'attacks'] as const) for (const { path } of taxonomy.walk(tree)) out.add(`${tree}:${path}`);
  return out;
}

/**
 * Compose keeps a tuple when the environment meets every need, so a risk or attack leaf with no
 * needs on its whole branch pairs with every environment — usually a proposal that forgot them,
 * not a class that truly happens anywhere. Flag each leaf the run made that way rather than let
 * it pass silently. Judged at the end of the run: a node created as a leaf that later got
 * children is a category, and a leaf whose parent came later with needs inherits them.
 */
export function needsFlags(taxonomy: Taxonomy, before: Set<string>): Change[] {
  const flags: Change[] = [];
  for (const tree of ['risks', 'attacks'] as const) {
    for (const { path } of taxonomy.leaves(tree)) {
      if (before.has(`${tree}:${path}`) || taxonomy.needsOf(tree, path).length > 0) continue;
      flags.push({
        operation: 'flag',
        tree,
        node: path,
        sources: [],
        detail:
          'new leaf without needs, and no ancestor declares any: compose will pair it with every environment — add needs to the tree file, or have a source propose them',
      });
    }
  }
  return flags;
}
