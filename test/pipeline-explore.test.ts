import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changelogYaml } from '../pipeline/explore/changelog.js';
import { explore, type ExploreResult } from '../pipeline/explore/explore.js';
import { OUT_OF_SCOPE_REASON } from '../pipeline/explore/operations.js';
import { DocumentCorpus } from '../pipeline/explore/sources/document-corpus.js';
import { loadDocumentFolder } from '../pipeline/explore/sources/local-folder.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';
import type { ScriptStep, StartedModelServer } from '../testing/index.js';
import { CORPUS, jsonStep, modelFor, pipelineScratch, userMessages } from './helpers/pipeline-fixtures.js';

/**
 * The exploration loop against the real openai client and the local scripted model server: the
 * scripts are the summary agent's replies, and the assertions are on what the rules made of them.
 */
const { server, scratchTaxonomy, folder } = pipelineScratch();
async function corpus(folder: string): Promise<DocumentCorpus> {
  return new DocumentCorpus('local', await loadDocumentFolder(join(CORPUS, folder)));
}

const createToolPoisoning = {
  concepts: [
    {
      term: 'tool description poisoning',
      tree: 'attacks',
      phase: 'inference',
      operation: 'create',
      node: 'prompt-injection/tool-description-poisoning',
      name: 'Tool description poisoning',
      description: 'Instructions hidden in a tool description the agent reads when it lists its tools.',
    },
  ],
  unresolved: [],
};
const noQueries = jsonStep({ queries: [] });

describe('vera explore: the create threshold and the pending list', () => {
  it('4 distinct sources leave a candidate pending (saved in the YAML); the 5th creates the leaf; a copy of a source is not a 5th', async () => {
    const { dir, taxonomy } = await scratchTaxonomy();
    const docs = await corpus('tool-poisoning');
    expect(docs.duplicates).toEqual([{ id: 'mirror:tp-1', origin: 'docs:tp-copy.md', duplicateOf: 'paper:tp-1', how: 'url' }]);

    const first = await server([1, 2, 3, 4].map((n) => jsonStep(createToolPoisoning, `Document paper:tp-${n} `)).concat(noQueries));
    const run1 = await explore({ taxonomy, sources: [docs], model: modelFor(first), budget: 4, perQuery: 10, queries: ['tool description poisoning'] });
    expect(first.script?.remaining).toBe(0);
    expect(run1.stopReason).toBe('budget');
    expect(run1.changelog.filter((e) => e.operation === 'pending').map((e) => e.detail)).toEqual([
      '1 of 5 distinct sources',
      '2 of 5 distinct sources',
      '3 of 5 distinct sources',
      '4 of 5 distinct sources',
    ]);
    expect(taxonomy.has('attacks', 'prompt-injection/tool-description-poisoning')).toBe(false);
    await taxonomy.save(dir);
    const saved = await readFile(join(dir, 'attacks.yaml'), 'utf8');
    expect(saved).toContain('pending:\n  - path: prompt-injection/tool-description-poisoning');
    expect(saved).toContain('evidence: [ paper:tp-1, paper:tp-2, paper:tp-3, paper:tp-4 ]');

    // A new run picks the pending list up from the files; the copy of tp-1 is never offered.
    const reloaded = await Taxonomy.load(dir);
    expect(reloaded.trees.attacks.pending[0]!.evidence).toHaveLength(4);
    const second = await server([jsonStep(createToolPoisoning, 'Document paper:tp-5 '), noQueries]);
    const run2 = await explore({
      taxonomy: reloaded,
      sources: [docs],
      model: modelFor(second),
      budget: 5,
      perQuery: 1,
      queries: ['tool description poisoning'],
    });
    expect(second.script?.remaining).toBe(0);
    const created = run2.changelog.find((e) => e.operation === 'create')!;
    expect(created).toMatchObject({
      tree: 'attacks',
      node: 'prompt-injection/tool-description-poisoning',
      sources: ['paper:tp-1', 'paper:tp-2', 'paper:tp-3', 'paper:tp-4', 'paper:tp-5'],
    });
    const node = reloaded.find('attacks', 'prompt-injection/tool-description-poisoning')!.node;
    expect(node).toMatchObject({
      name: 'Tool description poisoning',
      evidence: ['paper:tp-1', 'paper:tp-2', 'paper:tp-3', 'paper:tp-4', 'paper:tp-5'],
      children: [],
    });
    expect(reloaded.trees.attacks.pending).toEqual([]);
    expect(run2.changelog[0]).toMatchObject({ operation: 'duplicate-source', sources: ['mirror:tp-1'] });
    expect(run2.stopReason).toBe('no-frontier');
  });

  it('the same source read twice (an update after a create proposal) still counts once', async () => {
    const { taxonomy } = await scratchTaxonomy();
    const docs = await corpus('tool-poisoning');
    const twice = {
      concepts: [
        createToolPoisoning.concepts[0],
        { term: 'poisoned tool', tree: 'attacks', phase: 'inference', operation: 'update', node: 'prompt-injection/tool-description-poisoning' },
      ],
    };
    const s = await server([jsonStep(twice), noQueries]);
    const run = await explore({ taxonomy, sources: [docs], model: modelFor(s), budget: 1, queries: ['tool description poisoning'] });
    expect(run.changelog.filter((e) => e.tree === 'attacks').map((e) => [e.operation, e.detail])).toEqual([
      ['pending', '1 of 5 distinct sources'],
      ['skip', 'pending candidate already counts paper:tp-1 (1 of 5 distinct sources)'],
    ]);
  });
});

/** One document per operation, in retrieval order (the corpus ranks by query terms, then id). */
function operationsScript(): ScriptStep[] {
  return [
    jsonStep(
      {
        concepts: [
          { term: 'indirect injection via email', tree: 'attacks', phase: 'inference', operation: 'update', node: 'prompt-injection/indirect' },
          { term: 'credential forwarding', tree: 'risks', phase: 'inference', operation: 'update', node: 'data-exfiltration/credential-leak' },
          { term: 'webhook abuse', tree: 'risks', phase: 'inference', operation: 'update', node: 'data-exfiltration/webhook-abuse' },
        ],
        unresolved: ['password reset mail'],
      },
      'Document doc:email-injection ',
    ),
    jsonStep(
      {
        concepts: [
          {
            term: 'mass deletion',
            tree: 'risks',
            phase: 'inference',
            operation: 'merge',
            node: 'unauthorized-action/mass-deletion',
            into: 'unauthorized-action/destructive-deletion',
          },
        ],
      },
      'Document doc:merge-note ',
    ),
    jsonStep(
      {
        concepts: [
          { term: 'audit log tampering', tree: 'risks', phase: 'inference', operation: 'delete', node: 'integrity/log-tampering', retract: ['paper-3'] },
          { term: 'record tampering', tree: 'risks', phase: 'inference', operation: 'delete', node: 'integrity/record-tampering', retract: ['paper-3'] },
        ],
      },
      'Document doc:retraction ',
    ),
    jsonStep(
      {
        concepts: [
          {
            term: 'weight backdoor',
            tree: 'attacks',
            phase: 'training',
            operation: 'create',
            node: 'model-tampering/weight-backdoor',
            name: 'Weight backdoor',
            description: 'A trigger planted in the weights during fine-tuning.',
          },
          {
            term: 'trigger phrase',
            tree: 'attacks',
            phase: 'inference',
            operation: 'create',
            node: 'prompt-injection/trigger-phrase',
            name: 'Trigger phrase',
            description: 'A backdoor planted in model weights while fine-tuning, fired by a phrase.',
          },
        ],
      },
      'Document doc:weights-backdoor ',
    ),
    jsonStep({ queries: ['password reset forwarding', 'audit logs'] }),
  ];
}
const OPERATIONS_QUERIES = ['indirect injection email password', 'mass deletion destructive', 'retraction paper three', 'backdoor weights fine-tuned'];

async function runOperations(): Promise<{ dir: string; taxonomy: Taxonomy; result: ExploreResult; server: StartedModelServer }> {
  const { dir, taxonomy } = await scratchTaxonomy();
  const s = await server(operationsScript());
  const result = await explore({ taxonomy, sources: [await corpus('operations')], model: modelFor(s), budget: 4, perQuery: 1, queries: OPERATIONS_QUERIES });
  return { dir, taxonomy, result, server: s };
}

describe('vera explore: update, merge, delete, rejection', () => {
  it('update adds the document as evidence; an update of a missing node is skipped', async () => {
    const { taxonomy, result } = await runOperations();
    expect(taxonomy.find('attacks', 'prompt-injection/indirect')!.node.evidence).toEqual(['fw-a', 'fw-b', 'doc:email-injection']);
    expect(taxonomy.find('risks', 'data-exfiltration/credential-leak')!.node.evidence).toEqual(['fw-a', 'paper-1', 'doc:email-injection']);
    expect(result.changelog.find((e) => e.node === 'data-exfiltration/webhook-abuse')).toMatchObject({
      operation: 'skip',
      detail: 'update of a node that does not exist',
    });
    // Every document read is in the source registry, with its URL when it has one.
    expect(taxonomy.sources['doc:email-injection']).toEqual({
      title: 'Indirect injection through email',
      url: 'https://notes.example/email-injection',
      kind: 'note',
      origin: 'docs:email-injection-note.md',
    });
  });

  it('merge moves evidence and references into the surviving node and redirects the old id', async () => {
    const { dir, taxonomy, result } = await runOperations();
    expect(taxonomy.find('risks', 'unauthorized-action/mass-deletion')!.path).toBe('unauthorized-action/destructive-deletion');
    const survivor = taxonomy.find('risks', 'unauthorized-action/destructive-deletion')!.node;
    expect(survivor.evidence).toEqual(['fw-b', 'paper-2', 'doc:merge-note']);
    expect(survivor.references.map((r) => r.id)).toEqual(['T1485']);
    expect(taxonomy.find('risks', 'unauthorized-action')!.node.children.map((c) => c.id)).toEqual(['destructive-deletion', 'financial-transfer']);
    expect(result.changelog.find((e) => e.operation === 'merge')).toMatchObject({
      tree: 'risks',
      node: 'unauthorized-action/mass-deletion',
      into: 'unauthorized-action/destructive-deletion',
      sources: ['paper-2', 'doc:merge-note'],
    });
    await taxonomy.save(dir);
    expect(await readFile(join(dir, 'risks.yaml'), 'utf8')).toContain(
      'redirects:\n  unauthorized-action/mass-deletion: unauthorized-action/destructive-deletion',
    );
  });

  it('delete removes a node left without evidence and keeps one that still has some', async () => {
    const { taxonomy, result } = await runOperations();
    expect(taxonomy.has('risks', 'integrity/log-tampering')).toBe(false);
    expect(taxonomy.find('risks', 'integrity/record-tampering')!.node.evidence).toEqual(['fw-a']);
    const changes = result.changelog.filter((e) => e.node?.startsWith('integrity/')).map((e) => [e.operation, e.node, e.sources, e.detail]);
    expect(changes).toEqual([
      ['delete', 'integrity/log-tampering', ['doc:retraction', 'paper-3'], 'left without evidence'],
      // The retracted source stops counting for every node at once; the document's own second delete finds it gone.
      ['retract', 'integrity/record-tampering', ['doc:retraction', 'paper-3'], 'a retracted source; still supported by 1 sources; kept'],
      ['skip', 'integrity/record-tampering', ['doc:retraction'], 'cites none of the retracted sources (paper-3)'],
    ]);
    expect(taxonomy.sources['paper-3']!.retractedBy).toEqual(['doc:retraction']);
  });

  it('training-time-only attacks are rejected with the reason, whether the model flags them or not', async () => {
    const { dir, taxonomy, result } = await runOperations();
    const rejected = result.changelog.filter((e) => e.operation === 'reject');
    expect(rejected.map((e) => e.node)).toEqual(['model-tampering/weight-backdoor', 'prompt-injection/trigger-phrase']);
    expect(rejected[0]!.detail).toBe(`"weight backdoor": ${OUT_OF_SCOPE_REASON}`);
    expect(taxonomy.trees.attacks.pending).toEqual([]);
    expect(taxonomy.trees.attacks.rejected).toEqual([
      { term: 'weight backdoor', reason: OUT_OF_SCOPE_REASON, sources: ['doc:weights-backdoor'] },
      { term: 'trigger phrase', reason: OUT_OF_SCOPE_REASON, sources: ['doc:weights-backdoor'] },
    ]);
    await taxonomy.save(dir);
    expect((await Taxonomy.load(dir)).trees.attacks.rejected).toHaveLength(2);
  });

  it('is deterministic: the same replies give the same trees and the same changelog, byte for byte', async () => {
    const outputs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { dir, taxonomy, result } = await runOperations();
      await taxonomy.save(dir);
      const files = await Promise.all(['risks', 'attacks', 'environments', 'sources', 'exploration'].map((f) => readFile(join(dir, `${f}.yaml`), 'utf8')));
      outputs.push([...files, changelogYaml(result, { model: 'scripted', budget: 4, threshold: 5 })].join('\n=====\n'));
    }
    expect(outputs[1]).toBe(outputs[0]);
    expect(outputs[0]).toContain('operation: merge');
  });
});

describe('vera explore: the frontier and the budget', () => {
  it('proposes the next queries from sparse branches and unresolved terms, and the next iteration retrieves with them', async () => {
    const { taxonomy } = await scratchTaxonomy();
    const s = await server([
      jsonStep({ concepts: [], unresolved: ['memory persistence'] }, 'Document doc:agent-logs '),
      jsonStep({ queries: ['memory persistence attacks', 'agent logs'] }),
      jsonStep(
        {
          concepts: [
            {
              term: 'memory persistence',
              tree: 'attacks',
              phase: 'inference',
              operation: 'create',
              node: 'prompt-injection/memory-persistence',
              name: 'Memory persistence',
              description: 'An instruction planted in long-term memory steers later sessions.',
            },
          ],
        },
        'Document doc:memory-persistence ',
      ),
      jsonStep({ queries: [] }),
    ]);
    const result = await explore({ taxonomy, sources: [await corpus('frontier')], model: modelFor(s), budget: 10, perQuery: 1, queries: ['agent logs'] });
    expect(s.script?.remaining).toBe(0);
    const planner = JSON.parse(userMessages(s)[1]!) as { sparse: Array<{ node: string; sources: number }>; unresolved: string[]; alreadyQueried: string[] };
    expect(planner.unresolved).toEqual(['memory persistence']);
    expect(planner.alreadyQueried).toEqual(['agent logs']);
    // Sparse branches: fewest sources first (threshold 5), across the three trees.
    expect(planner.sparse[0]).toEqual({ node: 'attacks:prompt-injection', name: 'Prompt injection', sources: 1 });
    expect(planner.sparse.every((x) => x.sources < 5)).toBe(true);
    const retrievals = result.changelog.filter((e) => e.operation === 'retrieve').map((e) => [e.iteration, e.detail.split(':')[0], e.sources]);
    // "agent logs" was already run, so the frontier keeps only the new query.
    expect(retrievals).toEqual([
      [1, 'query "agent logs"', ['doc:agent-logs']],
      [2, 'query "memory persistence attacks"', ['doc:memory-persistence']],
    ]);
    expect(result.changelog.find((e) => e.operation === 'frontier')!.detail).toBe('"memory persistence attacks" — proposed by the summary agent');
    expect(result.stopReason).toBe('no-frontier');
    expect(taxonomy.exploration.processed).toEqual(['doc:agent-logs', 'doc:memory-persistence']);
  });

  it('stops when the retrieval budget is spent, mid-frontier, and saves the next frontier', async () => {
    const { taxonomy } = await scratchTaxonomy();
    const empty = { concepts: [] };
    const s = await server([
      jsonStep(empty, 'paper:tp-1'),
      jsonStep(empty, 'paper:tp-2'),
      jsonStep({ queries: ['field report'] }),
      jsonStep(empty, 'paper:tp-3'),
      jsonStep({ queries: ['tool poisoning survey'] }),
    ]);
    const result = await explore({
      taxonomy,
      sources: [await corpus('tool-poisoning')],
      model: modelFor(s),
      budget: 3,
      perQuery: 2,
      queries: ['tool description poisoning'],
    });
    expect(s.script?.remaining).toBe(0);
    expect(result).toMatchObject({ stopReason: 'budget', retrieved: 3, iterations: 2, frontier: ['tool poisoning survey'] });
    expect(result.changelog.at(-1)).toMatchObject({ operation: 'stop', detail: 'retrieval budget spent (3 of 3 documents)' });
    expect(taxonomy.exploration.frontier).toEqual(['tool poisoning survey']);
  });

  it('an invalid reply is asked again with its reason, then recorded and left unread; an invalid frontier falls back to the computed one', async () => {
    const { taxonomy } = await scratchTaxonomy();
    const bad = jsonStep({ concepts: [{ term: 'bad', tree: 'risks', phase: 'inference', operation: 'create', node: 'Bad Path' }] });
    const s = await server([
      bad,
      { ...bad, expect: { lastUser: 'Your previous reply was not valid, so nothing of it was applied' } },
      { reply: { text: 'I think the next query should be about memory.' } },
    ]);
    const result = await explore({ taxonomy, sources: [await corpus('frontier')], model: modelFor(s), budget: 1, perQuery: 1, queries: ['agent logs'] });
    expect(s.script?.remaining).toBe(0);
    const invalid = result.changelog.filter((e) => e.operation === 'invalid-reply');
    expect(invalid[0]!.detail).toMatch(/^summary of doc:agent-logs rejected: concepts\[0\]\.node: a node path is.*; asked again with the reason$/);
    expect(invalid[0]!.detail).toContain('concepts[0].name');
    expect(invalid[1]!.detail).toMatch(/^summary of doc:agent-logs rejected: .*; left unread for the next run$/);
    // Its evidence is not lost: the next run reads it again.
    expect(taxonomy.exploration.processed).not.toContain('doc:agent-logs');
    expect(invalid[2]!.detail).toMatch(/^frontier reply rejected: the reply is not a JSON object/);
    expect(result.changelog.find((e) => e.operation === 'frontier')!.detail).toMatch(
      /^"Prompt injection", "Direct prompt injection", .* — computed from unresolved terms/,
    );
  });
});

describe('vera explore --declared: documents that declare their concepts, no model', () => {
  const doc = (n: number, concepts: string) =>
    `---\nid: src-${n}\ntitle: Source ${n}\nurl: https://example.org/s${n}\nkind: paper\nconcepts:\n${concepts}---\n# Source ${n}\n\nWhat it says.\n`;
  const leaf =
    '  - { operation: create, tree: risks, node: privacy/doxxing, name: Doxxing, description: "A person\'s home address is posted where others can read it.", term: doxxing, phase: inference }\n';
  const category =
    '  - { operation: create, tree: risks, node: privacy, name: Privacy, description: "Personal data used against the purpose it was given for.", term: privacy, phase: inference, needs: [ { action: [ read ] } ] }\n';
  const training =
    '  - { operation: create, tree: attacks, node: fine-tune-poisoning, name: Fine-tune poisoning, description: "Poisoning the fine-tuning data of the model under test.", term: fine-tuning data poisoning, phase: training }\n';

  it('builds from empty trees: a leaf that waited for its parent is made with it; training-time concepts are rejected', async () => {
    // Documents 1–5 propose the leaf; only 4–8 propose the category, so the leaf waits, then comes with it.
    const files: Record<string, string> = {};
    for (let n = 1; n <= 8; n++) files[`d${n}.md`] = doc(n, (n <= 5 ? leaf : '') + (n >= 4 ? category : '') + (n === 1 ? training : ''));
    const dir = await folder(files);
    const { taxonomy: current } = await scratchTaxonomy();
    const taxonomy = Taxonomy.empty(current);
    const result = await explore({ taxonomy, sources: [new DocumentCorpus('local', await loadDocumentFolder(dir))], budget: 100 });
    expect(result.retrieved).toBe(8);
    const node = taxonomy.find('risks', 'privacy/doxxing')!.node;
    expect(node.evidence).toEqual(['src-1', 'src-2', 'src-3', 'src-4', 'src-5']);
    expect(taxonomy.find('risks', 'privacy')!.node.needs).toEqual([{ action: ['read'] }]);
    expect(taxonomy.trees.risks.pending).toEqual([]);
    const made = result.changelog.find((e) => e.operation === 'create' && e.node === 'privacy')!;
    expect(made.detail).toContain('with it privacy/doxxing, which waited for it');
    expect(taxonomy.trees.attacks.rejected.map((r) => r.term)).toEqual(['fine-tuning data poisoning']);
    expect([...taxonomy.walk('risks')].map((n) => n.path)).toEqual(['privacy', 'privacy/doxxing']);
  });

  it('a malformed declared concept names the file, the line and the field', async () => {
    const bad = doc(
      1,
      leaf + '  - { operation: create, tree: risks, node: Privacy Stuff, name: X y, description: "too short", term: the term, phase: inference }\n',
    );
    const dir = await folder({ 'notes/bad.md': bad });
    await expect(loadDocumentFolder(dir)).rejects.toThrow(/^notes\/bad\.md:8: front matter concepts\[1\]\.node: a node path is/);
  });
});
