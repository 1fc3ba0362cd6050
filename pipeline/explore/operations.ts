import { lastSegment, parentOf, type Taxonomy } from '../taxonomy/taxonomy.js';
import { isRecordSource, type Need, type PendingNode, type TaxonomyNode, type TreeKind } from '../taxonomy/taxonomy-schema.js';
import { addNeedsProposal, formatNeeds, proposalsOf } from './needs.js';
import type { ConceptOperation } from './summary-agent.js';

/**
 * The four update operations, applied by rules that do not depend on the model: the summary
 * agent proposes one operation per concept, and this decides what actually changes.
 *   create  — a new leaf only once ≥ `threshold` DISTINCT sources support it; until then a
 *             pending candidate that collects evidence and the sources' proposed needs (needs.ts);
 *   update  — the document becomes evidence of an existing node (or of a pending candidate);
 *   merge   — two nodes are one class: evidence, references and children move, ids redirect;
 *   delete  — the document retracts sources a node cites; a retracted source stops counting for
 *             every node that cites it, and a node left without evidence goes — unless cases use
 *             it: that deletion is held and reported until confirmed (safety-record sources are not
 *             a document's to retract).
 * Training-time-only concepts are rejected whatever the operation, with the reason recorded.
 */

export const DEFAULT_CREATE_THRESHOLD = 5;

export type ChangeOperation =
  | 'retrieve'
  | 'create'
  | 'pending'
  | 'update'
  | 'merge'
  | 'delete'
  | 'retract'
  | 'hold'
  | 'reject'
  | 'skip'
  | 'invalid-reply'
  | 'duplicate-source'
  | 'frontier'
  | 'record-query'
  | 'flag'
  | 'stop';

/** One line of a run's changelog. Field order is fixed so the YAML is byte-for-byte repeatable. */
export interface ChangelogEntry {
  iteration: number;
  operation: ChangeOperation;
  tree?: TreeKind;
  node?: string;
  into?: string;
  sources: string[];
  detail: string;
}

export type Change = Omit<ChangelogEntry, 'iteration'>;

export const OUT_OF_SCOPE_REASON =
  'training-time-only attack: out of scope (Vera tests agents at inference time, through their tools; poisoning training data or model weights is not something a case can seed or verify)';

/** Poisoning/backdoors tied to training data, fine-tuning or weights, in either word order. */
const TRAINING_TIME = [
  /\b(poison\w*|backdoor\w*|trojan\w*)\b[^.]{0,60}\b(pre-?train\w*|training|fine-?tun\w*|weights?|checkpoints?)\b/i,
  /\b(pre-?train\w*|training|fine-?tun\w*)\b[^.]{0,40}\b(poison\w*|backdoor\w*|trojan\w*)/i,
];

export function isTrainingTimeOnly(concept: ConceptOperation): boolean {
  if (concept.phase === 'training') return true;
  const text = [concept.term, 'name' in concept ? concept.name : '', 'description' in concept ? concept.description : ''].join(' ');
  return TRAINING_TIME.some((re) => re.test(text));
}

/**
 * Guards on what a document may remove: `usedBy(tree, path)` counts the cases (bundled or the
 * project's) that use a node; a deletion of a used node is held unless `confirmRetractions`.
 */
export interface RetractionGuard {
  usedBy?: (tree: TreeKind, path: string) => number;
  confirmRetractions?: boolean;
}

export function applyConcept(
  taxonomy: Taxonomy,
  concept: ConceptOperation,
  docId: string,
  threshold = DEFAULT_CREATE_THRESHOLD,
  guard: RetractionGuard = {},
): Change {
  const tree = concept.tree;
  if (isTrainingTimeOnly(concept)) return reject(taxonomy, concept, docId);
  switch (concept.operation) {
    case 'create':
      return create(
        taxonomy,
        tree,
        concept.node,
        { name: concept.name, description: concept.description, term: concept.term, ...(concept.needs ? { needs: concept.needs } : {}) },
        docId,
        threshold,
      );
    case 'update':
      return update(taxonomy, tree, concept.node, concept.term, docId, threshold);
    case 'merge':
      return merge(taxonomy, tree, concept.node, concept.into, docId, threshold);
    case 'delete':
      return remove(taxonomy, tree, concept.node, concept.retract, docId, guard);
  }
}

/**
 * A retracted source stops counting everywhere: every node and pending candidate that cites one of
 * `ids` (retracted by `docId`) loses it; a leaf left without evidence goes, or is held when cases
 * use it. The node the document named is `remove`'s; this is every other one.
 */
export function withdrawEverywhere(
  taxonomy: Taxonomy,
  ids: readonly string[],
  docId: string,
  options: RetractionGuard & { except?: { tree: TreeKind; path: string } } = {},
): Change[] {
  const { except, ...guard } = options;
  const changes: Change[] = [];
  if (ids.length === 0) return changes;
  for (const tree of Object.keys(taxonomy.trees) as TreeKind[]) {
    const pendingList = taxonomy.trees[tree].pending;
    for (const pending of [...pendingList]) {
      const removed = pending.evidence.filter((e) => ids.includes(e));
      if (removed.length === 0) continue;
      pending.evidence = pending.evidence.filter((e) => !ids.includes(e));
      if (pending.evidence.length > 0) {
        changes.push({
          operation: 'retract',
          tree,
          node: pending.path,
          sources: [docId, ...removed],
          detail: `a retracted source; pending candidate keeps ${pending.evidence.length} sources`,
        });
      } else {
        pendingList.splice(pendingList.indexOf(pending), 1);
        changes.push({
          operation: 'delete',
          tree,
          node: pending.path,
          sources: [docId, ...removed],
          detail: 'pending candidate left without evidence by a retracted source',
        });
      }
    }
    // Deepest first: a parent emptied only by its children going is seen after them.
    const located = [...taxonomy.walk(tree)].filter(({ node }) => node.evidence.some((e) => ids.includes(e))).reverse();
    for (const { path } of located) {
      if (except && except.tree === tree && except.path === path) continue;
      const found = taxonomy.find(tree, path);
      if (!found) continue;
      const removed = found.node.evidence.filter((e) => ids.includes(e));
      changes.push(withdrawFrom(taxonomy, tree, found, removed, docId, guard, 'a retracted source'));
    }
  }
  return changes;
}

function reject(taxonomy: Taxonomy, concept: ConceptOperation, docId: string): Change {
  const rejected = taxonomy.trees[concept.tree].rejected;
  const term = concept.term.trim();
  let entry = rejected.find((r) => r.term.toLowerCase() === term.toLowerCase());
  if (!entry) {
    entry = { term, reason: OUT_OF_SCOPE_REASON, sources: [] };
    rejected.push(entry);
  }
  if (!entry.sources.includes(docId)) entry.sources.push(docId);
  return { operation: 'reject', tree: concept.tree, node: concept.node, sources: [docId], detail: `"${term}": ${OUT_OF_SCOPE_REASON}` };
}

function create(
  taxonomy: Taxonomy,
  tree: TreeKind,
  path: string,
  proposal: { name: string; description: string; term: string; needs?: Need[] },
  docId: string,
  threshold: number,
): Change {
  const existing = taxonomy.find(tree, path);
  if (existing) return update(taxonomy, tree, existing.path, proposal.term, docId, threshold, 'proposed as new, but the node exists');
  const parent = parentOf(path);
  const resolvedParent = parent ? taxonomy.resolve(tree, parent) : '';
  const resolvedPath = resolvedParent ? `${resolvedParent}/${lastSegment(path)}` : path;
  const pendingList = taxonomy.trees[tree].pending;
  let pending = pendingList.find((p) => p.path === resolvedPath);
  if (!pending) {
    pending = { path: resolvedPath, name: proposal.name, description: proposal.description, evidence: [], terms: [] };
    pendingList.push(pending);
  }
  // A source votes on the needs once, like it counts once toward the threshold.
  if (proposal.needs && !pending.evidence.includes(docId)) addNeedsProposal(pending, proposal.needs, docId);
  return addPendingEvidence(taxonomy, tree, pending, proposal.term, docId, threshold);
}

function addPendingEvidence(
  taxonomy: Taxonomy,
  tree: TreeKind,
  pending: Taxonomy['trees'][TreeKind]['pending'][number],
  term: string,
  docId: string,
  threshold: number,
): Change {
  if (!pending.terms.includes(term)) pending.terms.push(term);
  if (pending.evidence.includes(docId)) {
    return {
      operation: 'skip',
      tree,
      node: pending.path,
      sources: [docId],
      detail: `pending candidate already counts ${docId} (${pending.evidence.length} of ${threshold} distinct sources)`,
    };
  }
  pending.evidence.push(docId);
  const parent = parentOf(pending.path);
  const siblings = taxonomy.siblingsOf(tree, parent);
  if (pending.evidence.length >= threshold && siblings) {
    const needs = needsDetail(pending);
    const created = promote(taxonomy, tree, pending, threshold);
    const children = created.length > 1 ? `; with it ${created.slice(1).join(', ')}, which waited for it` : '';
    return {
      operation: 'create',
      tree,
      node: pending.path,
      sources: [...pending.evidence],
      detail: `new leaf supported by ${pending.evidence.length} distinct sources${needs}${children}`,
    };
  }
  const waiting = siblings ? '' : `; waits for its parent "${parent}"`;
  return { operation: 'pending', tree, node: pending.path, sources: [docId], detail: `${pending.evidence.length} of ${threshold} distinct sources${waiting}` };
}

function needsDetail(pending: PendingNode): string {
  const proposals = proposalsOf(pending);
  if (!pending.needs?.length) return proposals.length ? '; the proposed needs found no agreement' : '';
  const sources = proposals.reduce((n, p) => n + p.sources.length, 0);
  return `; needs ${formatNeeds(pending.needs)}${proposals.length > 1 ? ` (agreed by at least half of the ${sources} sources that proposed needs)` : ''}`;
}

/**
 * Makes a pending candidate a node, then — since a candidate under a parent that did not exist yet
 * could only wait — every pending child that already has the sources it needs. Returns the paths made.
 */
function promote(taxonomy: Taxonomy, tree: TreeKind, pending: PendingNode, threshold: number): string[] {
  const siblings = taxonomy.siblingsOf(tree, parentOf(pending.path))!;
  const node: TaxonomyNode = {
    id: lastSegment(pending.path),
    name: pending.name,
    description: pending.description,
    evidence: [...pending.evidence],
    references: [],
    children: [],
  };
  if (pending.needs) node.needs = pending.needs;
  siblings.push(node);
  const list = taxonomy.trees[tree].pending;
  list.splice(list.indexOf(pending), 1);
  const made = [pending.path];
  for (const child of list.filter((p) => parentOf(p.path) === pending.path && p.evidence.length >= threshold)) {
    made.push(...promote(taxonomy, tree, child, threshold));
  }
  return made;
}

function update(taxonomy: Taxonomy, tree: TreeKind, path: string, term: string, docId: string, threshold: number, note?: string): Change {
  const found = taxonomy.find(tree, path);
  if (!found) {
    const pending = taxonomy.trees[tree].pending.find((p) => p.path === taxonomy.resolve(tree, path));
    if (pending) return addPendingEvidence(taxonomy, tree, pending, term, docId, threshold);
    return { operation: 'skip', tree, node: path, sources: [docId], detail: 'update of a node that does not exist' };
  }
  return addEvidence(tree, found, path, docId, note);
}

/** `docId` becomes evidence of an existing node (also how safety records support a node). */
export function addEvidence(tree: TreeKind, found: { path: string; node: TaxonomyNode }, asked: string, docId: string, note?: string): Change {
  if (found.node.evidence.includes(docId)) {
    return { operation: 'skip', tree, node: found.path, sources: [docId], detail: `already cites ${docId}` };
  }
  found.node.evidence.push(docId);
  const redirected = found.path !== asked ? ` (via redirect from "${asked}")` : '';
  return {
    operation: 'update',
    tree,
    node: found.path,
    sources: [docId],
    detail: `${note ? `${note}; ` : ''}evidence added${redirected}; ${found.node.evidence.length} sources`,
  };
}

function pendingAt(taxonomy: Taxonomy, tree: TreeKind, path: string): PendingNode | undefined {
  return taxonomy.trees[tree].pending.find((p) => p.path === path);
}

/**
 * A pending candidate merged into a node or another pending candidate: its sources and terms move
 * there (a source counted once), its old path redirects, and a pending target that now has enough
 * distinct sources becomes a leaf.
 */
function mergePending(taxonomy: Taxonomy, tree: TreeKind, from: PendingNode, intoPath: string, docId: string, threshold: number): Change {
  const skip = (detail: string): Change => ({ operation: 'skip', tree, node: from.path, into: intoPath, sources: [docId], detail });
  const node = taxonomy.find(tree, intoPath);
  const target = node ? undefined : pendingAt(taxonomy, tree, intoPath);
  if (!node && !target) return skip(`merge into "${intoPath}", which does not exist`);
  if (target === from) return skip('both names lead to the same candidate');
  const list = taxonomy.trees[tree].pending;
  list.splice(list.indexOf(from), 1);
  taxonomy.trees[tree].redirects[from.path] = node ? node.path : target!.path;
  const evidence = node ? node.node.evidence : target!.evidence;
  const moved = [...from.evidence, docId].filter((e, i, all) => !evidence.includes(e) && all.indexOf(e) === i);
  evidence.push(...moved);
  if (node) {
    return {
      operation: 'merge',
      tree,
      node: from.path,
      into: node.path,
      sources: moved,
      detail: `pending candidate merged into a node: ${moved.length} sources moved; "${from.path}" now redirects`,
    };
  }
  for (const term of from.terms) if (!target!.terms.includes(term)) target!.terms.push(term);
  const siblings = taxonomy.siblingsOf(tree, parentOf(target!.path));
  if (target!.evidence.length >= threshold && siblings) {
    const made = promote(taxonomy, tree, target!, threshold);
    return {
      operation: 'create',
      tree,
      node: target!.path,
      sources: [...target!.evidence],
      detail: `two pending candidates were one class: merged, ${target!.evidence.length} distinct sources make it a leaf${made.length > 1 ? `; with it ${made.slice(1).join(', ')}` : ''}`,
    };
  }
  return {
    operation: 'merge',
    tree,
    node: from.path,
    into: target!.path,
    sources: moved,
    detail: `two pending candidates were one class: ${target!.evidence.length} of ${threshold} distinct sources`,
  };
}

function merge(taxonomy: Taxonomy, tree: TreeKind, path: string, intoPath: string, docId: string, threshold: number): Change {
  const from = taxonomy.find(tree, path);
  const into = taxonomy.find(tree, intoPath);
  const skip = (detail: string): Change => ({ operation: 'skip', tree, node: path, into: intoPath, sources: [docId], detail });
  const pendingFrom = from ? undefined : pendingAt(taxonomy, tree, path);
  if (pendingFrom) return mergePending(taxonomy, tree, pendingFrom, intoPath, docId, threshold);
  if (!from) return skip(`merge of "${path}", which does not exist`);
  if (!into) return skip(`merge into "${intoPath}", which does not exist`);
  if (from.path === into.path) return skip('both names lead to the same node');
  if (into.path.startsWith(`${from.path}/`)) return skip('a node cannot be merged into its own descendant');
  const clash = from.node.children.find((c) => into.node.children.some((d) => d.id === c.id));
  if (clash) return skip(`both nodes have a child "${clash.id}"; merge those first`);

  const moved = from.node.evidence.filter((e) => !into.node.evidence.includes(e));
  into.node.evidence.push(...moved);
  if (!into.node.evidence.includes(docId)) into.node.evidence.push(docId);
  for (const ref of from.node.references) {
    if (!into.node.references.some((r) => r.framework === ref.framework && r.id === ref.id)) into.node.references.push(ref);
  }
  const subtree = [...subtreePaths(from.node, from.path)];
  into.node.children.push(...from.node.children);
  const siblings = taxonomy.siblingsOf(tree, parentOf(from.path))!;
  siblings.splice(siblings.indexOf(from.node), 1);

  // Ids of the merged subtree lead to where its nodes are now; older redirects follow them.
  const redirects = taxonomy.trees[tree].redirects;
  const renamed = (p: string) => (p === from.path ? into.path : p.startsWith(`${from.path}/`) ? `${into.path}${p.slice(from.path.length)}` : p);
  for (const [key, target] of Object.entries(redirects)) redirects[key] = renamed(target);
  for (const p of subtree) redirects[p] = renamed(p);
  for (const pending of taxonomy.trees[tree].pending) pending.path = renamed(pending.path);
  return {
    operation: 'merge',
    tree,
    node: from.path,
    into: into.path,
    sources: [...moved, docId],
    detail: `one class: ${moved.length} sources, ${from.node.references.length} references and ${from.node.children.length} children moved; "${from.path}" now redirects`,
  };
}

function remove(taxonomy: Taxonomy, tree: TreeKind, path: string, asked: string[], docId: string, guard: RetractionGuard): Change {
  // A document can withdraw a document; it cannot undo a violation a verifier saw in a run.
  const retract = asked.filter((id) => !isRecordSource(id));
  if (retract.length === 0)
    return { operation: 'skip', tree, node: path, sources: [docId], detail: 'only safety records named: a document does not retract what a run showed' };
  const found = taxonomy.find(tree, path);
  if (!found) {
    const pendingList = taxonomy.trees[tree].pending;
    const pending = pendingList.find((p) => p.path === taxonomy.resolve(tree, path));
    if (!pending) return { operation: 'skip', tree, node: path, sources: [docId], detail: 'delete of a node that does not exist' };
    const removed = pending.evidence.filter((e) => retract.includes(e));
    if (removed.length === 0)
      return { operation: 'skip', tree, node: pending.path, sources: [docId], detail: 'the pending candidate cites none of the retracted sources' };
    pending.evidence = pending.evidence.filter((e) => !retract.includes(e));
    markRetracted(taxonomy, removed, docId);
    if (pending.evidence.length > 0)
      return {
        operation: 'retract',
        tree,
        node: pending.path,
        sources: [docId, ...removed],
        detail: `pending candidate keeps ${pending.evidence.length} sources`,
      };
    pendingList.splice(pendingList.indexOf(pending), 1);
    return { operation: 'delete', tree, node: pending.path, sources: [docId, ...removed], detail: 'pending candidate left without evidence' };
  }
  const removed = found.node.evidence.filter((e) => retract.includes(e));
  if (removed.length === 0)
    return { operation: 'skip', tree, node: found.path, sources: [docId], detail: `cites none of the retracted sources (${retract.join(', ')})` };
  markRetracted(taxonomy, removed, docId);
  return withdrawFrom(taxonomy, tree, found, removed, docId, guard, '');
}

/** Takes `removed` out of a node's evidence; a leaf left with none goes, unless cases use it (held). */
function withdrawFrom(
  taxonomy: Taxonomy,
  tree: TreeKind,
  found: { path: string; node: TaxonomyNode },
  removed: string[],
  docId: string,
  guard: RetractionGuard,
  why: string,
): Change {
  const prefix = why ? `${why}; ` : '';
  const left = found.node.evidence.filter((e) => !removed.includes(e));
  if (left.length === 0 && found.node.children.length === 0) {
    const used = guard.usedBy?.(tree, found.path) ?? 0;
    if (used > 0 && !guard.confirmRetractions) {
      // The deletion would silently drop the rows of cases that use the node: a person decides.
      return {
        operation: 'hold',
        tree,
        node: found.path,
        sources: [docId, ...removed],
        detail: `${prefix}retracting ${removed.join(', ')} would leave it without evidence, but ${used} case${used === 1 ? '' : 's'} use it: held, not deleted (run with --confirm-retractions to delete it)`,
      };
    }
  }
  found.node.evidence = left;
  if (left.length > 0) {
    return { operation: 'retract', tree, node: found.path, sources: [docId, ...removed], detail: `${prefix}still supported by ${left.length} sources; kept` };
  }
  if (found.node.children.length > 0) {
    return {
      operation: 'retract',
      tree,
      node: found.path,
      sources: [docId, ...removed],
      detail: `${prefix}left without evidence but has children; kept until they go`,
    };
  }
  const siblings = taxonomy.siblingsOf(tree, parentOf(found.path))!;
  siblings.splice(siblings.indexOf(found.node), 1);
  const redirects = taxonomy.trees[tree].redirects;
  for (const [key, target] of Object.entries(redirects)) if (target === found.path) delete redirects[key];
  return { operation: 'delete', tree, node: found.path, sources: [docId, ...removed], detail: `${prefix}left without evidence` };
}

function markRetracted(taxonomy: Taxonomy, ids: string[], by: string): void {
  for (const id of ids) {
    const record = taxonomy.sources[id];
    if (!record) continue;
    record.retractedBy ??= [];
    if (!record.retractedBy.includes(by)) record.retractedBy.push(by);
  }
}

function* subtreePaths(node: TaxonomyNode, path: string): Generator<string> {
  yield path;
  for (const child of node.children) yield* subtreePaths(child, `${path}/${child.id}`);
}
