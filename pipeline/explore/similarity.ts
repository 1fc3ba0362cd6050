import { parentOf, type Taxonomy } from '../taxonomy/taxonomy.js';
import { treeKinds, type TreeKind } from '../taxonomy/taxonomy-schema.js';
import { tokens } from './sources/document-corpus.js';

/**
 * Merge candidates: pairs of nodes (or pending candidates) of one tree whose names and descriptions
 * say nearly the same thing, computed without a model so that every run shows the same pairs. The summary agent is
 * only asked to confirm one when the document it reads shows the two are one class — similarity
 * of wording is a reason to look, not evidence.
 *
 * The score is a weighted Jaccard over word stems (`tokens`: lower case, stop words dropped,
 * plurals folded): each stem weighs its inverse document frequency over the tree's nodes, so the
 * wording every description shares ("outside the organisation", "sent or published") counts for
 * little, and name stems weigh double, since a name is the class in two or three words.
 */

export interface MergeCandidate {
  tree: TreeKind;
  /** The node that comes first in the tree (depth first). */
  node: string;
  other: string;
  /** 0–1, rounded to 3 places. */
  similarity: number;
}

export const DEFAULT_SIMILARITY_THRESHOLD = 0.25;
export const DEFAULT_CANDIDATES_PER_TREE = 5;
const NAME_WEIGHT = 2;

export interface SimilarityOptions {
  threshold?: number;
  /** Best pairs kept per tree (the prompt must stay short). */
  perTree?: number;
  trees?: readonly TreeKind[];
}

/** Siblings and cousins of each tree scoring at least `threshold`, best first, at most `perTree` per tree. */
export function mergeCandidates(taxonomy: Taxonomy, options: SimilarityOptions = {}): MergeCandidate[] {
  const threshold = options.threshold ?? DEFAULT_SIMILARITY_THRESHOLD;
  const perTree = options.perTree ?? DEFAULT_CANDIDATES_PER_TREE;
  const out: MergeCandidate[] = [];
  for (const tree of options.trees ?? treeKinds) {
    out.push(
      ...scorePairs(taxonomy, tree)
        .filter((c) => c.similarity >= threshold)
        .slice(0, perTree),
    );
  }
  return out;
}

/** Every sibling and cousin pair of `tree` — nodes and pending candidates — with its score, best first (ties in tree order, pending last). */
export function scorePairs(taxonomy: Taxonomy, tree: TreeKind): MergeCandidate[] {
  // Pending candidates take part too: two of them (or one and a node) that say the same thing would
  // otherwise collect the same sources apart, and neither might ever reach the threshold.
  const items = [...[...taxonomy.walk(tree)].map(({ path, node }) => ({ path, ...node })), ...taxonomy.trees[tree].pending];
  const nodes = items.map(({ path, name, description }) => ({
    path,
    name: new Set(tokens(name)),
    text: new Set(tokens(`${name} ${description}`)),
  }));
  const df = new Map<string, number>();
  for (const n of nodes) for (const stem of n.text) df.set(stem, (df.get(stem) ?? 0) + 1);
  const idf = (stem: string) => Math.log((nodes.length + 1) / ((df.get(stem) ?? 0) + 0.5));
  const weights = nodes.map((n) => {
    const w = new Map<string, number>();
    for (const stem of n.text) w.set(stem, (n.name.has(stem) ? NAME_WEIGHT : 1) * idf(stem));
    return w;
  });
  const scored: Array<MergeCandidate & { order: number }> = [];
  for (let i = 0; i < nodes.length; i++) {
    for (let j = i + 1; j < nodes.length; j++) {
      if (!related(nodes[i]!.path, nodes[j]!.path)) continue;
      const similarity = Math.round(weightedJaccard(weights[i]!, weights[j]!) * 1000) / 1000;
      scored.push({ tree, node: nodes[i]!.path, other: nodes[j]!.path, similarity, order: i * nodes.length + j });
    }
  }
  scored.sort((a, b) => b.similarity - a.similarity || a.order - b.order);
  return scored.map(({ order: _order, ...c }) => c);
}

/** Siblings (one parent) or cousins (parents that are siblings): the nodes a merge could join. */
function related(a: string, b: string): boolean {
  const pa = parentOf(a);
  const pb = parentOf(b);
  if (pa === pb) return true;
  return pa !== '' && pb !== '' && parentOf(pa) === parentOf(pb);
}

function weightedJaccard(a: Map<string, number>, b: Map<string, number>): number {
  let min = 0;
  let max = 0;
  for (const [stem, x] of a) {
    const y = b.get(stem) ?? 0;
    min += Math.min(x, y);
    max += Math.max(x, y);
  }
  for (const [stem, y] of b) if (!a.has(stem)) max += y;
  return max > 0 ? min / max : 0;
}

/** The same pair in either order. */
export function pairKey(tree: TreeKind, a: string, b: string): string {
  return a < b ? `${tree}:${a}~${b}` : `${tree}:${b}~${a}`;
}
