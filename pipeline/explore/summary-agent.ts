import { z } from 'zod';
import type { JsonModel, JsonReply } from '../llm/json-model.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import { need, nodePath, sourceId, treeKind, treeKinds } from '../taxonomy/taxonomy-schema.js';
import type { SourceDocument } from './sources/source-document.js';

/**
 * The summary agent: an LLM that reads one document and proposes, per concept it finds, exactly
 * one operation on the trees. It proposes; `applyConcept` (operations.ts) decides, by rules that
 * do not depend on the model (the 5-source threshold, scope, what exists).
 */

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
    needs: z.array(need).optional(),
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
  '- "create": nothing covers it; "node" is "<parent path>/<new-id>" (lower-case, "-" between words), with "name" and a one-sentence "description" in your own words. It becomes a leaf only once 5 distinct sources support it; until then it waits as a pending candidate, so reuse a pending path when one matches.',
  '- "merge": the document shows that two existing nodes are one class: "node" is merged "into" the other.',
  '- "delete": the document retracts or refutes sources a node relies on (a withdrawn paper, a REJECTED CVE record): "retract" lists those source ids. A node left without evidence is deleted.',
  'Set "phase" to "training" for attacks that only work at training time (poisoning pretraining or fine-tuning data, backdoors planted in model weights): they are out of scope. Anything that happens while the agent runs is "inference".',
  'Put terms you could not place in "unresolved".',
  'Reply with one JSON object only: {"concepts": [{"term": "...", "tree": "risks|attacks|environments", "phase": "inference|training", "operation": "create|update|merge|delete", "node": "...", "into": "... (merge)", "name": "... (create)", "description": "... (create)", "retract": ["... (delete)"]}], "unresolved": ["..."]}',
].join('\n');

export const FRONTIER_SYSTEM_PROMPT = [
  "You plan the next retrieval round of Vera's risk exploration.",
  'You get the sparse branches of the taxonomy (nodes with little evidence), the pending candidates, the terms the summary agent could not place, and the queries already run.',
  'Propose new search queries (a few keywords each) most likely to find documents that support or settle them. Do not repeat a query already run.',
  'Reply with one JSON object only: {"queries": ["...", "..."]}',
].join('\n');

/** How the trees look to the model: every node with its evidence count, and the pending list. */
export function describeTrees(taxonomy: Taxonomy): string {
  const lines: string[] = [];
  for (const kind of treeKinds) {
    lines.push(`${kind}:`);
    for (const { path, node } of taxonomy.walk(kind)) lines.push(`  ${path} — ${node.name} [${node.evidence.length}]`);
    const pending = taxonomy.trees[kind].pending;
    if (pending.length) {
      lines.push(`  pending candidates:`);
      for (const p of pending) lines.push(`    ${p.path} — ${p.name} [${p.evidence.length} of the sources needed]`);
    }
  }
  return lines.join('\n');
}

export function summaryUserMessage(doc: SourceDocument, taxonomy: Taxonomy, maxChars: number): string {
  const text = doc.text.length > maxChars ? `${doc.text.slice(0, maxChars)}\n[… truncated at ${maxChars} characters]` : doc.text;
  return [
    `Document ${doc.id} (${doc.kind}): ${doc.title}`,
    ...(doc.url ? [`URL: ${doc.url}`] : []),
    '---',
    text,
    '---',
    'Current trees (path — name [evidence count]):',
    describeTrees(taxonomy),
  ].join('\n');
}

export function askSummary(model: JsonModel, doc: SourceDocument, taxonomy: Taxonomy, maxChars: number): Promise<JsonReply<SummaryResponse>> {
  return model.ask({ system: SUMMARY_SYSTEM_PROMPT, user: summaryUserMessage(doc, taxonomy, maxChars), schema: summaryResponse });
}
