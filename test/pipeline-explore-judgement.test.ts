import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changelogYaml } from '../pipeline/explore/changelog.js';
import { explore } from '../pipeline/explore/explore.js';
import { agreedNeeds } from '../pipeline/explore/needs.js';
import { mergeCandidates, scorePairs } from '../pipeline/explore/similarity.js';
import { DocumentCorpus } from '../pipeline/explore/sources/document-corpus.js';
import { loadDocumentFolder } from '../pipeline/explore/sources/local-folder.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';
import type { StartedModelServer } from '../testing/index.js';
import { CORPUS, jsonStep, modelFor, pipelineScratch, userMessages } from './helpers/pipeline-fixtures.js';
import { REPO } from './helpers/run-vitest.js';

/**
 * What the summary agent is shown so that it can judge (descriptions, evidence ids, needs,
 * possible duplicates), and what the rules make of what it proposes on that basis: retractions
 * of earlier sources, needs agreed by several proposals, needs-less leaves flagged, merges
 * confirmed from the similarity candidates.
 */
const { server, scratchTaxonomy, folder } = pipelineScratch();
async function corpus(folder: string): Promise<DocumentCorpus> {
  return new DocumentCorpus('local', await loadDocumentFolder(folder.startsWith('/') ? folder : join(CORPUS, folder)));
}
const noQueries = jsonStep({ queries: [] });
const systemOf = (s: StartedModelServer, i: number) => s.requests[i]!.conversation!.messages.find((m) => m.role === 'system')!.text;

describe('the summary agent sees what it needs to judge', () => {
  it('each node and pending candidate comes with its description (cut at 160 characters), own needs and evidence ids; the system prompt explains needs', async () => {
    const { taxonomy } = await scratchTaxonomy();
    const long = `Audit logs are edited to hide what happened, ${'and the edit itself is then covered up again '.repeat(6)}until nothing is left.`;
    taxonomy.find('risks', 'integrity/log-tampering')!.node.description = long;
    taxonomy.sources['paper:tp-1'] = { title: 'Field report 1', kind: 'paper' };
    taxonomy.trees.attacks.pending.push({
      path: 'prompt-injection/tool-description-poisoning',
      name: 'Tool description poisoning',
      description: 'Instructions hidden in a tool description the agent reads when it lists its tools.',
      evidence: ['paper:tp-1'],
      terms: [],
      needs: [{ action: ['read'], resource: ['file'] }],
    });
    const s = await server([jsonStep({ concepts: [] }), noQueries]);
    await explore({ taxonomy, sources: [await corpus('frontier')], model: modelFor(s), budget: 1, queries: ['agent logs'] });
    const prompt = userMessages(s)[0]!;
    expect(prompt).toContain('Current trees (path — name: description [needs; evidence source ids]):');
    expect(prompt).toContain(
      '\n  data-exfiltration — Data exfiltration: Data leaves the organisation through a channel the agent controls. [needs: read; egress; 2 sources: fw-a fw-b]\n',
    );
    expect(prompt).toContain(
      '\n  data-exfiltration/credential-leak — Credential leak: A credential is sent or published outside the organisation. [needs: read on secret; egress on secret; 2 sources: fw-a paper-1]\n',
    );
    expect(prompt).toContain(
      '\n  integrity/record-tampering — Record tampering: A stored record is altered without authority. [needs: modify; 2 sources: fw-a paper-3]\n',
    );
    const cut = prompt.split('\n').find((l) => l.startsWith('  integrity/log-tampering — '))!;
    expect(cut).toBe(`  integrity/log-tampering — Log tampering: ${long.slice(0, 159).trimEnd()}… [1 sources: paper-3]`);
    expect(prompt).toContain(
      '\n  pending candidates:\n    prompt-injection/tool-description-poisoning — Tool description poisoning: Instructions hidden in a tool description the agent reads when it lists its tools. [needs: read on file; 1 of the 5 sources needed: paper:tp-1]\n',
    );
    const system = systemOf(s, 0);
    expect(system).toContain('"needs" (create, risks and attacks)');
    expect(system).toContain('Actions: read, send, egress, publish, create, modify, delete, grant-access, revoke-access, merge-code, transfer-funds, execute.');
    expect(system).toContain('pull-request');
  });

  it('a delete retracts a source read earlier in the run, which the prompt listed as evidence of the node', async () => {
    const { taxonomy } = await scratchTaxonomy();
    const docs = await folder({
      'study.md':
        '---\nid: paper:ledger-study\nkind: paper\n---\n# Field study of ledger edits\n\nAgents asked to tidy a ledger altered stored records without authority.\n',
      'notice.md':
        '---\nid: notice:ledger-withdrawn\nkind: note\n---\n# Withdrawal notice\n\nThe ledger study was withdrawn by its authors: its data was fabricated.\n',
    });
    const s = await server([
      jsonStep(
        { concepts: [{ term: 'ledger edits', tree: 'risks', phase: 'inference', operation: 'update', node: 'integrity/record-tampering' }] },
        'Document paper:ledger-study ',
      ),
      {
        // Only a prompt that shows the node's evidence ids lets the model name the one to retract.
        expect: {
          lastUser:
            'integrity/record-tampering — Record tampering: A stored record is altered without authority. [needs: modify; 3 sources: fw-a paper-3 paper:ledger-study]',
        },
        reply: {
          text: JSON.stringify({
            concepts: [
              {
                term: 'withdrawn study',
                tree: 'risks',
                phase: 'inference',
                operation: 'delete',
                node: 'integrity/record-tampering',
                retract: ['paper:ledger-study'],
              },
            ],
          }),
        },
      },
      noQueries,
    ]);
    const result = await explore({
      taxonomy,
      sources: [await corpus(docs)],
      model: modelFor(s),
      budget: 2,
      perQuery: 1,
      queries: ['field study ledger', 'withdrawal notice'],
    });
    expect(s.script?.remaining).toBe(0);
    expect(taxonomy.find('risks', 'integrity/record-tampering')!.node.evidence).toEqual(['fw-a', 'paper-3']);
    expect(result.changelog.find((e) => e.operation === 'retract')).toMatchObject({
      node: 'integrity/record-tampering',
      sources: ['notice:ledger-withdrawn', 'paper:ledger-study'],
      detail: 'still supported by 2 sources; kept',
    });
    expect(taxonomy.sources['paper:ledger-study']!.retractedBy).toEqual(['notice:ledger-withdrawn']);
  });
});

describe('needs of new nodes', () => {
  const poisoning = (needs?: unknown) => ({
    term: 'tool description poisoning',
    tree: 'attacks',
    phase: 'inference',
    operation: 'create',
    node: 'prompt-injection/tool-description-poisoning',
    name: 'Tool description poisoning',
    description: 'Instructions hidden in a tool description the agent reads when it lists its tools.',
    ...(needs ? { needs } : {}),
  });
  const authority = {
    term: 'fake authority',
    tree: 'attacks',
    phase: 'inference',
    operation: 'create',
    node: 'social-engineering/fake-authority',
    name: 'Fake authority',
    description: 'The attacker claims to speak for a manager or an auditor so the agent obeys.',
  };
  const readFile_ = { action: 'read', resource: 'file' };
  const egress = { action: ['egress'] };
  // Per report: what each of the five proposes. Report 1 is the outlier; report 4 proposes none.
  const proposals = [[{ action: 'execute' }], [readFile_, egress], [egress, readFile_], undefined, [egress]];

  it('a pending candidate keeps every proposal (saved); the promoted leaf gets the needs at least half the proposers agree on; a needs-less leaf is flagged', async () => {
    const { dir, taxonomy } = await scratchTaxonomy();
    const docs = await corpus('tool-poisoning');
    const step = (n: number) => jsonStep({ concepts: [poisoning(proposals[n - 1]), authority] }, `Document paper:tp-${n} `);
    const first = await server([1, 2, 3, 4].map(step).concat(noQueries));
    await explore({ taxonomy, sources: [docs], model: modelFor(first), budget: 4, perQuery: 10, queries: ['tool description poisoning'] });
    const pending = taxonomy.trees.attacks.pending.find((p) => p.path === 'prompt-injection/tool-description-poisoning')!;
    expect(pending.proposedNeeds).toEqual([
      { needs: [{ action: ['execute'] }], sources: ['paper:tp-1'] },
      { needs: [{ action: ['read'], resource: ['file'] }, { action: ['egress'] }], sources: ['paper:tp-2', 'paper:tp-3'] },
    ]);
    expect(pending.needs).toEqual([{ action: ['read'], resource: ['file'] }, { action: ['egress'] }]);
    await taxonomy.save(dir);
    expect(await readFile(join(dir, 'attacks.yaml'), 'utf8')).toContain('proposedNeeds:');

    const reloaded = await Taxonomy.load(dir);
    const second = await server([step(5), noQueries]);
    const run = await explore({
      taxonomy: reloaded,
      sources: [docs],
      model: modelFor(second),
      budget: 5,
      perQuery: 10,
      queries: ['tool description poisoning'],
    });
    expect(second.script?.remaining).toBe(0);
    // Four sources proposed needs: execute (1 of 4) is dropped, read on file (2 of 4) and egress (3 of 4) kept.
    expect(reloaded.find('attacks', 'prompt-injection/tool-description-poisoning')!.node.needs).toEqual([
      { action: ['read'], resource: ['file'] },
      { action: ['egress'] },
    ]);
    expect(run.changelog.find((e) => e.operation === 'create' && e.node === 'prompt-injection/tool-description-poisoning')!.detail).toBe(
      'new leaf supported by 5 distinct sources; needs read on file; egress (agreed by at least half of the 4 sources that proposed needs)',
    );
    // social-engineering has no needs either, so the new leaf would pair with every environment.
    expect(reloaded.find('attacks', 'social-engineering/fake-authority')!.node.needs).toBeUndefined();
    expect(run.changelog.filter((e) => e.operation === 'flag')).toEqual([
      {
        iteration: 1,
        operation: 'flag',
        tree: 'attacks',
        node: 'social-engineering/fake-authority',
        sources: [],
        detail:
          'new leaf without needs, and no ancestor declares any: compose will pair it with every environment — add needs to the tree file, or have a source propose them',
      },
    ]);
  });

  it('a tie keeps the need; a need outside the capability vocabulary is an invalid reply', async () => {
    const a = { action: ['read'] };
    const b = { action: ['send'] };
    expect(
      agreedNeeds([
        { needs: [a], sources: ['s1'] },
        { needs: [b], sources: ['s2'] },
      ]),
    ).toEqual([a, b]);
    const { taxonomy } = await scratchTaxonomy();
    const s = await server([jsonStep({ concepts: [poisoning([{ action: 'exfiltrate' }])] }), noQueries]);
    const result = await explore({
      taxonomy,
      sources: [await corpus('tool-poisoning')],
      model: modelFor(s),
      budget: 1,
      repairs: 0,
      queries: ['tool description poisoning'],
    });
    expect(result.changelog.find((e) => e.operation === 'invalid-reply')!.detail).toMatch(/^summary of paper:tp-1 rejected: concepts\[0\]\.needs\[0\]\.action/);
  });
});

describe('merge candidates by similarity', () => {
  it('on the bundled trees: a payment-redirection/payment-fraud pair is a candidate; the financial-records/HR-records near miss is not', async () => {
    const bundled = await Taxonomy.load(join(REPO, 'cases/taxonomy'));
    const all = mergeCandidates(bundled, { perTree: Infinity });
    const pair = (a: string, b: string) => all.find((c) => c.tree === 'risks' && ((c.node === a && c.other === b) || (c.node === b && c.other === a)));
    expect(pair('fraud/payment-redirection', 'fraud/payment-fraud')).toBeDefined();
    // The names share "records leak", but what leaks differs; the weighted score stays under the threshold.
    expect(pair('data-exfiltration/financial-records-leak', 'data-exfiltration/hr-records-leak')).toBeUndefined();
    const nearMiss = scorePairs(bundled, 'risks').find(
      (c) => c.node === 'data-exfiltration/financial-records-leak' && c.other === 'data-exfiltration/hr-records-leak',
    )!;
    expect(nearMiss.similarity).toBeGreaterThan(0.1);
    expect(nearMiss.similarity).toBeLessThan(0.25);
    // Defaults: at most 5 per tree, and the real pair is among the risks' five.
    const shown = mergeCandidates(bundled);
    expect(shown.filter((c) => c.tree === 'risks').length).toBeLessThanOrEqual(5);
    expect(shown.some((c) => c.node === 'fraud/payment-redirection' && c.other === 'fraud/payment-fraud')).toBe(true);
  });

  it('the summary agent is shown the candidates; a merge of one is recorded as proposed by similarity and confirmed', async () => {
    const { taxonomy } = await scratchTaxonomy();
    taxonomy.find('risks', 'unauthorized-action')!.node.children.push({
      id: 'bulk-deletion',
      name: 'Bulk deletion',
      description: "Many items are deleted at once on an attacker's request, with no copy left.",
      evidence: ['paper-1'],
      references: [],
      children: [],
    });
    const shown =
      'Possible duplicates (similar names and descriptions) — confirm with a merge operation only if this document shows they are one class:\n  risks: unauthorized-action/mass-deletion ~ unauthorized-action/bulk-deletion (similarity ';
    const s = await server([
      jsonStep(
        {
          concepts: [
            {
              term: 'bulk deletion',
              tree: 'risks',
              phase: 'inference',
              operation: 'merge',
              node: 'unauthorized-action/bulk-deletion',
              into: 'unauthorized-action/mass-deletion',
            },
          ],
        },
        shown,
      ),
      noQueries,
    ]);
    const result = await explore({ taxonomy, sources: [await corpus('frontier')], model: modelFor(s), budget: 1, queries: ['agent logs'] });
    expect(s.script?.remaining).toBe(0);
    const candidate = result.mergeCandidates.find((c) => c.other === 'unauthorized-action/bulk-deletion')!;
    expect(candidate).toMatchObject({ tree: 'risks', node: 'unauthorized-action/mass-deletion', shown: 1, confirmedBy: 'doc:agent-logs' });
    expect(candidate.similarity).toBeGreaterThanOrEqual(0.25);
    const merge = result.changelog.find((e) => e.operation === 'merge')!;
    expect(merge.detail).toMatch(/; proposed by similarity \(0\.\d\d\) and confirmed by doc:agent-logs$/);
    expect(taxonomy.find('risks', 'unauthorized-action/bulk-deletion')!.path).toBe('unauthorized-action/mass-deletion');
    const yaml = changelogYaml(result, { model: 'scripted', budget: 1, threshold: 5 });
    expect(yaml).toMatch(
      /mergeCandidates:\n {2}- tree: risks\n {4}node: unauthorized-action\/mass-deletion\n {4}other: unauthorized-action\/bulk-deletion\n {4}similarity: 0\.\d+\n {4}shown: 1\n {4}confirmedBy: doc:agent-logs\n/,
    );
  });
});
