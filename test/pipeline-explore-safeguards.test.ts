import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CaseUsage } from '../pipeline/explore/case-usage.js';
import { applyConcept, withdrawEverywhere } from '../pipeline/explore/operations.js';
import { mergeCandidates } from '../pipeline/explore/similarity.js';
import { DocumentCorpus } from '../pipeline/explore/sources/document-corpus.js';
import type { SourceDocument } from '../pipeline/explore/sources/source-document.js';
import type { ConceptOperation } from '../pipeline/explore/summary-agent.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';
import { copyTaxonomy } from './helpers/pipeline-fixtures.js';

/**
 * What keeps exploration honest beyond the model: copies of one source count once however they are
 * named; a retracted source stops counting everywhere; a retraction does not silently delete a node
 * cases use; near-identical pending candidates are offered for a merge. (An invalid summary reply's
 * repair round and its unread document: test/pipeline-explore.test.ts.)
 */
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function taxonomy(): Promise<Taxonomy> {
  const dir = await copyTaxonomy();
  dirs.push(dir);
  return Taxonomy.load(dir);
}

const post = (n: number, text: string, url = `https://blog${n}.example/post`): SourceDocument => ({
  id: `blog:post-${n}`,
  title: `Post ${n}`,
  text,
  url,
  kind: 'note',
  origin: `docs:post-${n}.md`,
});

const ARTICLE = [
  'We looked at how coding agents treat the descriptions of the tools they are given. A tool description is text the model reads every turn, and nobody reviews it the way code is reviewed.',
  'In our test harness a third-party server advertised a harmless-looking formatter whose description told the model to read the project environment file first and include it in every call.',
  'Every agent we tried complied in at least some runs. The secrets left through an argument the formatter never needed, and no user message ever mentioned the file.',
  'Pinning server versions, diffing descriptions on update and showing them to the user at install time would each have caught the change before the first run.',
  'We also saw the agents repeat the instruction to other tools later in the session, which suggests the text stays in context long after the call that fetched it.',
].join('\n\n');

describe('copies of one source count once, however they are named', () => {
  it('five byte-identical posts under five ids and URLs, a re-post with new case, spacing and a footer, and a different post', () => {
    const copies = [1, 2, 3, 4, 5].map((n) => post(n, ARTICLE));
    const repost = post(6, `${ARTICLE.toUpperCase().replaceAll(' ', '  ')}\n\nShared from my newsletter — subscribe for more.`);
    const other = post(7, ARTICLE.split('\n\n').reverse().slice(0, 3).join('\n\n').replaceAll('the', 'a'));
    const corpus = new DocumentCorpus('local', [...copies, repost, other]);
    expect(corpus.documents.map((d) => d.id)).toEqual(['blog:post-1', 'blog:post-7']);
    expect(corpus.duplicates).toEqual([
      { id: 'blog:post-2', origin: 'docs:post-2.md', duplicateOf: 'blog:post-1', how: 'text' },
      { id: 'blog:post-3', origin: 'docs:post-3.md', duplicateOf: 'blog:post-1', how: 'text' },
      { id: 'blog:post-4', origin: 'docs:post-4.md', duplicateOf: 'blog:post-1', how: 'text' },
      { id: 'blog:post-5', origin: 'docs:post-5.md', duplicateOf: 'blog:post-1', how: 'text' },
      { id: 'blog:post-6', origin: 'docs:post-6.md', duplicateOf: 'blog:post-1', how: 'near-text' },
    ]);
  });
});

const retract = (node: string, ids: string[]): ConceptOperation => ({
  operation: 'delete',
  tree: 'risks',
  node,
  retract: ids,
  term: 'retraction',
  phase: 'inference',
});

describe('a retracted source stops counting everywhere', () => {
  it('retracting paper-3 from log tampering takes it from record tampering too (which keeps fw-a)', async () => {
    const t = await taxonomy();
    t.sources['doc:erratum'] = { title: 'Erratum', kind: 'note' };
    const change = applyConcept(t, retract('integrity/log-tampering', ['paper-3']), 'doc:erratum');
    expect(change).toMatchObject({ operation: 'delete', node: 'integrity/log-tampering' });
    expect(t.find('risks', 'integrity/record-tampering')!.node.evidence).toEqual(['fw-a', 'paper-3']);
    const elsewhere = withdrawEverywhere(t, ['paper-3'], 'doc:erratum');
    expect(elsewhere).toEqual([
      {
        operation: 'retract',
        tree: 'risks',
        node: 'integrity/record-tampering',
        sources: ['doc:erratum', 'paper-3'],
        detail: 'a retracted source; still supported by 1 sources; kept',
      },
    ]);
    expect(t.find('risks', 'integrity/record-tampering')!.node.evidence).toEqual(['fw-a']);
    expect(t.sources['paper-3']!.retractedBy).toEqual(['doc:erratum']);
  });
});

describe('a retraction does not silently delete what cases use', () => {
  it('a node left without evidence that cases use is held and reported; confirmed, it goes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-usage-'));
    dirs.push(dir);
    await writeFile(
      join(dir, 'logs.case.yaml'),
      'id: wipe-audit-log\ntaxonomy:\n  risk: integrity/log-tampering\n  attack: prompt-injection/direct\n  environment: files\n---\nid: other\ntaxonomy: { risk: integrity/log-tampering, attack: jailbreak/role-play, environment: shell }\n',
    );
    const usage = await CaseUsage.of([join(dir, 'logs.case.yaml')]);
    expect(usage.usedBy('risks', 'integrity/log-tampering')).toBe(2);
    expect(usage.usedBy('risks', 'integrity')).toBe(2);
    expect(usage.usedBy('risks', 'integrity/record-tampering')).toBe(0);

    const held = await taxonomy();
    const guard = { usedBy: (tree: 'risks' | 'attacks' | 'environments', path: string) => usage.usedBy(tree, path) };
    expect(applyConcept(held, retract('integrity/log-tampering', ['paper-3']), 'doc:unrelated-advisory', 5, guard)).toEqual({
      operation: 'hold',
      tree: 'risks',
      node: 'integrity/log-tampering',
      sources: ['doc:unrelated-advisory', 'paper-3'],
      detail: 'retracting paper-3 would leave it without evidence, but 2 cases use it: held, not deleted (run with --confirm-retractions to delete it)',
    });
    expect(held.find('risks', 'integrity/log-tampering')!.node.evidence).toEqual(['paper-3']);

    const confirmed = await taxonomy();
    expect(
      applyConcept(confirmed, retract('integrity/log-tampering', ['paper-3']), 'doc:unrelated-advisory', 5, { ...guard, confirmRetractions: true }),
    ).toMatchObject({
      operation: 'delete',
      node: 'integrity/log-tampering',
    });
    expect(confirmed.has('risks', 'integrity/log-tampering')).toBe(false);
  });
});

describe('near-identical pending candidates', () => {
  const create = (node: string, name: string, description: string): ConceptOperation => ({
    operation: 'create',
    tree: 'risks',
    node,
    name,
    description,
    term: name.toLowerCase(),
    phase: 'inference',
  });

  it('are offered to the summary agent as merge candidates, and a confirmed merge pools their sources into a leaf', async () => {
    const t = await taxonomy();
    for (const doc of ['s1', 's2', 's3'])
      applyConcept(t, create('integrity/audit-log-wiping', 'Audit log wiping', 'Audit log entries are wiped to hide an action.'), doc);
    for (const doc of ['s4', 's5'])
      applyConcept(t, create('integrity/audit-log-erasure', 'Audit log erasure', 'Audit log entries are erased to hide an action.'), doc);
    expect(t.trees.risks.pending.map((p) => [p.path, p.evidence.length])).toEqual([
      ['integrity/audit-log-wiping', 3],
      ['integrity/audit-log-erasure', 2],
    ]);
    const candidates = mergeCandidates(t, { trees: ['risks'] });
    expect(candidates).toContainEqual(expect.objectContaining({ node: 'integrity/audit-log-wiping', other: 'integrity/audit-log-erasure' }));

    const merged = applyConcept(
      t,
      {
        operation: 'merge',
        tree: 'risks',
        node: 'integrity/audit-log-erasure',
        into: 'integrity/audit-log-wiping',
        term: 'audit log erasure',
        phase: 'inference',
      },
      's4',
    );
    expect(merged).toMatchObject({ operation: 'create', node: 'integrity/audit-log-wiping', sources: ['s1', 's2', 's3', 's4', 's5'] });
    expect(t.find('risks', 'integrity/audit-log-wiping')!.node.evidence).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(t.trees.risks.pending).toEqual([]);
    expect(t.trees.risks.redirects['integrity/audit-log-erasure']).toBe('integrity/audit-log-wiping');
  });
});
