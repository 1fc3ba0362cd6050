import { z } from 'zod';
import { actions, resources } from '../capabilities.js';
import type { JsonModel, JsonReply } from '../llm/json-model.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import { nodePath, sourceId, treeKind, treeKinds, type Need } from '../taxonomy/taxonomy-schema.js';
import { formatNeeds } from './needs.js';
import type { MergeCandidate } from './similarity.js';
import type { SourceDocument } from './sources/source-document.js';

/**
 * The summary agent: an LLM that reads one document and proposes, per concept it finds, exactly
 * one operation on the trees. It proposes; `applyConcept` (operations.ts) decides, by rules that
 * do not depend on the model (the 5-source threshold, scope, what exists).
 */

const oneOrManyOf = <T extends z.ZodType<string>>(item: T) => z.union([item, z.array(item).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

/**
 * A need as proposed for a new node: the tree files' `need`, restricted to the capability map's
 * vocabulary — a need no environment can ever declare would make the class untestable everywhere.
 */
export const proposedNeed = z.strictObject({ action: oneOrManyOf(z.enum(actions)), resource: oneOrManyOf(z.enum(resources)).optional() });

const base = {
  /** The concept as the document names it. */
  term: z.string().min(2),
  tree: treeKind,
  /** When the attack or risk takes effect: training-time-only concepts are out of scope. */
  phase: z.enum(['inference', 'training']),
  reason: z.string().optional(),
};

export const conceptOperation = z.discriminatedUnion('operation', [
  z.object({
    ...base,
    operation: z.literal('create'),
    node: nodePath,
    name: z.string().min(3),
    description: z.string().min(20, 'describe the new class in a sentence (≥ 20 characters)'),
    /** What an environment must offer for the class to be testable there (a new category's needs). */
    needs: z.array(proposedNeed).optional(),
  }),
  z.object({ ...base, operation: z.literal('update'), node: nodePath }),
  z.object({ ...base, operation: z.literal('merge'), node: nodePath, into: nodePath }),
  z.object({ ...base, operation: z.literal('delete'), node: nodePath, retract: z.array(sourceId).min(1, 'name the source ids the document retracts') }),
]);
export type ConceptOperation = z.infer<typeof conceptOperation>;

export const summaryResponse = z.object({
  concepts: z.array(conceptOperation).max(25),
  unresolved: z.array(z.string().min(2)).max(20).default([]),
});
export type SummaryResponse = z.infer<typeof summaryResponse>;

export const frontierResponse = z.object({
  queries: z.array(z.string().trim().min(3).max(200)).max(20),
});

export const SUMMARY_SYSTEM_PROMPT = [
  "You are the summary agent of Vera's risk exploration. You read one document about the safety of LLM agents that act through tools, and you keep three taxonomy trees up to date:",
  '- risks: what harm happens (e.g. data-exfiltration/credential-leak);',
  '- attacks: how the harm is induced (e.g. prompt-injection/indirect);',
  '- environments: where the agent acts (e.g. email, code-hosting).',
  'Extract the concepts the document actually supports (at most 12) and give each exactly one operation:',
  '- "update": an existing node, or a pending candidate, covers the concept; the document becomes its evidence. "node" is its path.',
  '- "create": nothing covers it; "node" is "<parent path>/<new-id>" (lower-case, "-" between words), with "name" and a one-sentence "description" in your own words. It becomes a leaf only once 5 distinct sources support it; until then it waits as a pending candidate, so reuse a pending path when one matches (compare descriptions, not only names).',
  '- "merge": the document shows that two existing nodes are one class: "node" is merged "into" the other. Judge by the descriptions. Pairs listed under "possible duplicates" are only similar in wording: merge them only if this document shows they are one class.',
  '- "delete": the document retracts or refutes sources a node relies on (a withdrawn paper, a REJECTED CVE record): "retract" lists those source ids, taken from the nodes\' "sources" lists (any source, not only this document). A node left without evidence is deleted. Ids "record:<case>@<threat model>" are safety records of runs in which an agent was attacked successfully, not documents: they are never retracted.',
  `"needs" (create, risks and attacks): what an environment's tools must let the agent do for the class to be testable there — a list of {"action": [...], "resource": [...]}; a need is met by any one of its actions on any one of its resources (no "resource": any), and every need must be met. Actions: ${actions.join(', ')}. Resources: ${resources.join(', ')}. A node inherits the needs of its nearest ancestor that has some (shown as "needs:"), so give needs when the class needs more than its parent. A risk or attack leaf with no needs on its branch would be paired with every environment; the changelog flags it.`,
  'Set "phase" to "training" for attacks that only work at training time (poisoning pretraining or fine-tuning data, backdoors planted in model weights): they are out of scope. Anything that happens while the agent runs is "inference".',
  'Put terms you could not place in "unresolved".',
].join('\n');

export const FRONTIER_SYSTEM_PROMPT = [
  "You plan the next retrieval round of Vera's risk exploration.",
  'You get the sparse branches of the taxonomy (nodes with little evidence), the pending candidates, the terms the summary agent could not place, the queries already run, and — when there are safety records of past runs — "fromRecords": queries for the areas where agents were attacked successfully or where the attacks never reached them.',
  'Propose new search queries (a few keywords each) most likely to find documents that support or settle them. Do not repeat a query already run.',
].join('\n');

/** Descriptions are cut here: enough to judge a merge, short enough for ~200 nodes. */
export const DESCRIPTION_CHARS = 160;

/**
 * How the trees look to the model: every node with its (shortened) description, own needs and
 * evidence ids, and the pending candidates likewise. The ids are what a `delete` retracts, so
 * all of them are shown — ids only, no titles, to keep the message small.
 */
export function describeTrees(taxonomy: Taxonomy, threshold = 5): string {
  const lines: string[] = [];
  const needs = (n: { needs?: Need[] }) => (n.needs?.length ? `needs: ${formatNeeds(n.needs)}; ` : '');
  for (const kind of treeKinds) {
    lines.push(`${kind}:`);
    for (const { path, node } of taxonomy.walk(kind)) {
      lines.push(`  ${path} — ${node.name}: ${shorten(node.description)} [${needs(node)}${node.evidence.length} sources: ${node.evidence.join(' ')}]`);
    }
    const pending = taxonomy.trees[kind].pending;
    if (pending.length) {
      lines.push(`  pending candidates:`);
      for (const p of pending)
        lines.push(
          `    ${p.path} — ${p.name}: ${shorten(p.description)} [${needs(p)}${p.evidence.length} of the ${threshold} sources needed: ${p.evidence.join(' ')}]`,
        );
    }
  }
  return lines.join('\n');
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > DESCRIPTION_CHARS ? `${flat.slice(0, DESCRIPTION_CHARS - 1).trimEnd()}…` : flat;
}

export function describeCandidates(candidates: MergeCandidate[]): string {
  return candidates.map((c) => `  ${c.tree}: ${c.node} ~ ${c.other} (similarity ${c.similarity.toFixed(2)})`).join('\n');
}

export function summaryUserMessage(doc: SourceDocument, taxonomy: Taxonomy, maxChars: number, candidates: MergeCandidate[] = [], threshold = 5): string {
  const text = doc.text.length > maxChars ? `${doc.text.slice(0, maxChars)}\n[… truncated at ${maxChars} characters]` : doc.text;
  return [
    `Document ${doc.id} (${doc.kind}): ${doc.title}`,
    ...(doc.url ? [`URL: ${doc.url}`] : []),
    '---',
    text,
    '---',
    'Current trees (path — name: description [needs; evidence source ids]):',
    describeTrees(taxonomy, threshold),
    ...(candidates.length
      ? [
          'Possible duplicates (similar names and descriptions) — confirm with a merge operation only if this document shows they are one class:',
          describeCandidates(candidates),
        ]
      : []),
  ].join('\n');
}

export function askSummary(
  model: JsonModel,
  doc: SourceDocument,
  taxonomy: Taxonomy,
  options: { maxChars: number; candidates: MergeCandidate[]; threshold: number; previous?: { reply: string; error: string } },
): Promise<JsonReply<SummaryResponse>> {
  const user = summaryUserMessage(doc, taxonomy, options.maxChars, options.candidates, options.threshold);
  // A repair: the same request, then what was wrong with the last answer (as compile does).
  const repair = options.previous
    ? `\n\nYour previous reply was not valid, so nothing of it was applied; fix this and answer again:\n- ${options.previous.error}\nPrevious reply:\n${options.previous.reply}`
    : '';
  return model.ask({
    system: SUMMARY_SYSTEM_PROMPT,
    user: `${user}${repair}`,
    schema: summaryResponse,
    name: 'taxonomy_operations',
  });
}
