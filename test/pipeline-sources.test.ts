import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main, type CliIO } from '../cli/main.js';
import { ArxivSource, parseArxivAtom } from '../pipeline/explore/sources/arxiv.js';
import { DocumentCorpus } from '../pipeline/explore/sources/document-corpus.js';
import { loadFeedFile } from '../pipeline/explore/sources/feeds.js';
import { loadDocumentFolder, parseTextDocument } from '../pipeline/explore/sources/local-folder.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';
import { startScriptedModelServer } from '../testing/index.js';
import { copyTaxonomy, CORPUS, jsonStep, PIPELINE_FIXTURES } from './helpers/pipeline-fixtures.js';
import { REPO } from './helpers/run-vitest.js';

const FEEDS = join(PIPELINE_FIXTURES, 'feeds');

describe('document sources: structured feeds', () => {
  it('ATLAS-style YAML: one document per technique, sub-techniques say whose', async () => {
    const docs = await loadFeedFile(join(FEEDS, 'atlas-techniques.yaml'));
    expect(docs.map((d) => [d.id, d.title, d.url])).toEqual([
      ['atlas:aml.t0051', 'AML.T0051 LLM Prompt Injection', 'https://atlas.mitre.org/techniques/AML.T0051'],
      ['atlas:aml.t0051.001', 'AML.T0051.001 Indirect', 'https://atlas.mitre.org/techniques/AML.T0051.001'],
      ['atlas:aml.t0020', 'AML.T0020 Poison Training Data', 'https://atlas.mitre.org/techniques/AML.T0020'],
    ]);
    expect(docs[1]!.text).toMatch(/^Indirect \(sub-technique of AML\.T0051\)\n\nThe crafted input reaches/);
    expect(docs.every((d) => d.kind === 'technique' && d.origin === 'feed:atlas-techniques.yaml')).toBe(true);
  });

  it('STIX bundles (ATT&CK JSON): attack-patterns only, revoked ones skipped', async () => {
    const docs = await loadFeedFile(join(FEEDS, 'attack-stix.json'));
    expect(docs).toEqual([
      {
        id: 'attack:t1566',
        title: 'T1566 Phishing',
        text: 'Phishing\n\nAdversaries send messages that trick recipients into giving up access (test text).',
        url: 'https://attack.mitre.org/techniques/T1566/',
        kind: 'technique',
        origin: 'feed:attack-stix.json',
      },
    ]);
  });

  it('CVE JSON 5 records: description and problem types; a REJECTED record says so', async () => {
    const [published, rejected] = await loadFeedFile(join(FEEDS, 'cve-records.json'));
    expect(published).toMatchObject({
      id: 'cve:cve-2099-0001',
      kind: 'advisory',
      url: 'https://www.cve.org/CVERecord?id=CVE-2099-0001',
      title: 'CVE-2099-0001 Assistant plugin forwards mail on instructions found in message bodies',
    });
    expect(published!.text).toContain('Problem types: CWE-77 Improper Neutralization of Special Elements used in a Command');
    expect(rejected!.title).toMatch(/^\[REJECTED\] CVE-2099-0002 /);
    expect(rejected!.text).toContain('This candidate was withdrawn: it duplicates CVE-2099-0001.');
  });

  it('an unrecognised feed is one error naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-feed-'));
    try {
      await writeFile(join(dir, 'other.json'), JSON.stringify({ items: [1, 2] }));
      await expect(loadFeedFile(join(dir, 'other.json'))).rejects.toThrow(`${join(dir, 'other.json')}: not a recognised feed (expected ATLAS-style techniques`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('document sources: local folders', () => {
  it('reads Markdown with front matter (id, title, url, kind); defaults come from the path and the first heading', async () => {
    const docs = await loadDocumentFolder(join(CORPUS, 'frontier'));
    expect(docs.map((d) => [d.id, d.title, d.kind, d.origin])).toEqual([
      ['doc:agent-logs', 'What agents leave in logs', 'note', 'docs:agent-logs.md'],
      ['doc:memory-persistence', 'Memory persistence attacks', 'note', 'docs:memory-persistence.md'],
    ]);
    const plain = parseTextDocument('# Heading here\nbody', { file: 'notes/A B.txt', origin: 'docs:notes/A B.txt', fallbackId: 'doc:notes/A B' });
    expect(plain).toMatchObject({ id: 'doc:notes/a-b', title: 'Heading here', kind: 'note' });
    expect(() => parseTextDocument('---\nkind: blog\n---\nx', { file: 'x.md', origin: 'docs:x.md', fallbackId: 'doc:x' })).toThrow(
      'x.md: front matter kind: expected paper, advisory',
    );
  });

  it('reads who issued a document (publisher) and why its citation could not be verified (unverified); a blank one names file and line', () => {
    const at = { file: 'x.md', origin: 'docs:x.md', fallbackId: 'doc:x' };
    const doc = parseTextDocument('---\nid: cwe-78\npublisher: MITRE\nunverified: the page did not load when checked\n---\nbody', at);
    expect(doc).toMatchObject({ id: 'cwe-78', publisher: 'MITRE', unverified: 'the page did not load when checked' });
    expect(parseTextDocument('---\nid: a\n---\nbody', at)).not.toHaveProperty('publisher');
    expect(() => parseTextDocument('---\nid: a\npublisher: " "\n---\nbody', at)).toThrow(
      'x.md:3: front matter publisher: name the organisation or research group that issued the source',
    );
    expect(() => parseTextDocument('---\nid: a\nunverified: no\n---\nbody', at)).toThrow('x.md:3: front matter unverified: say why');
  });

  it('reads PDFs through pdf.js (pdfjs-dist 5.x on Node 20)', async () => {
    const [doc] = await loadDocumentFolder(join(PIPELINE_FIXTURES, 'pdf'));
    expect(doc).toMatchObject({
      id: 'doc:calendar-invite-injection',
      title: 'Calendar invite injection',
      kind: 'paper',
      origin: 'docs:calendar-invite-injection.pdf',
    });
    expect(doc!.text).toBe('Calendar invite injection\nAn agent accepted an outside invitation whose notes told it to share the board deck.');
  });

  it('ranks by query terms (title hits count more), then id, and skips documents already read', async () => {
    const corpus = new DocumentCorpus('local', await loadDocumentFolder(join(CORPUS, 'operations')));
    expect((await corpus.search('deletion retraction', 5, new Set())).map((d) => d.id)).toEqual(['doc:merge-note', 'doc:retraction']);
    expect((await corpus.search('deletion retraction', 5, new Set(['doc:merge-note']))).map((d) => d.id)).toEqual(['doc:retraction']);
    expect(await corpus.search('the and of', 5, new Set())).toEqual([]);
  });
});

const ATOM = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>arXiv Query</title>
  <entry>
    <id>http://arxiv.org/abs/2499.00001v2</id>
    <published>2499-01-02T00:00:00Z</published>
    <title>Agents &amp; Their Tools:
      Injection Through Email</title>
    <summary>We show that tool-using agents follow instructions hidden in &lt;email&gt; bodies.</summary>
    <author><name>A. Author</name></author>
    <author><name>B. Author</name></author>
  </entry>
  <entry>
    <id>http://arxiv.org/abs/2499.00002v1</id>
    <title>A second paper</title>
    <summary>Short.</summary>
  </entry>
</feed>`;

describe('document sources: arXiv (Atom API)', () => {
  let server: Server;
  let endpoint: string;
  const queries: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      queries.push(url.searchParams.get('search_query') ?? '');
      res.writeHead(200, { 'content-type': 'application/atom+xml' });
      res.end(ATOM);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/query`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('parses entries: one source id per paper (version dropped), entities decoded, authors kept', () => {
    const [first] = parseArxivAtom(ATOM);
    expect(first).toMatchObject({
      id: 'arxiv:2499.00001',
      title: 'Agents & Their Tools: Injection Through Email',
      url: 'https://arxiv.org/abs/2499.00001',
      kind: 'paper',
      origin: 'arxiv',
    });
    expect(first!.text).toContain('Authors: A. Author, B. Author');
    expect(first!.text).toContain('follow instructions hidden in <email> bodies');
  });

  it('searches with every query term, skips papers already read, and probes before use', async () => {
    const arxiv = new ArxivSource({ endpoint });
    expect(await arxiv.probe()).toBeUndefined();
    const docs = await arxiv.search('email injection', 5, new Set(['arxiv:2499.00001']));
    expect(docs.map((d) => d.id)).toEqual(['arxiv:2499.00002']);
    expect(queries.at(-1)).toBe('all:email AND all:injection');
  });

  it('when arXiv cannot be reached, probe says so in a sentence (and vera explore goes on without it)', async () => {
    const closed = await closedPort();
    const message = await new ArxivSource({ endpoint: `http://127.0.0.1:${closed}/api/query`, timeoutMs: 3000 }).probe();
    expect(message).toMatch(new RegExp(`^arXiv is not reachable at http://127\\.0\\.0\\.1:${closed}/api/query \\(.+\\); exploring without it`));
  });
});

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('vera explore (CLI)', () => {
  function io(): CliIO & { lines: string[]; errors: string[] } {
    const lines: string[] = [];
    const errors: string[] = [];
    return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), cwd: REPO };
  }

  it('with no reachable source it says what to pass and exits 1', async () => {
    const x = io();
    const port = await closedPort();
    expect(await main(['explore', '--arxiv', '--arxiv-endpoint', `http://127.0.0.1:${port}/q`, '--base-url', 'http://127.0.0.1:9'], x)).toBe(1);
    expect(x.errors[0]).toMatch(/^vera explore: arXiv is not reachable at /);
    expect(x.errors[1]).toBe('vera explore: no document source to read: give --docs <dir>, --feed <file> or --arxiv (when the network allows)');
  });

  it('reads folders and feeds, writes the trees and the changelog', async () => {
    const taxonomy = await copyTaxonomy();
    const out = await mkdtemp(join(tmpdir(), 'vera-explore-out-'));
    const model = await startScriptedModelServer({
      script: [
        jsonStep(
          {
            concepts: [
              {
                term: 'phishing',
                tree: 'risks',
                phase: 'inference',
                operation: 'create',
                node: 'fraud/phishing',
                name: 'Phishing',
                description: 'Messages that lure recipients into giving up access.',
              },
            ],
          },
          'Document attack:t1566 ',
        ),
        jsonStep({ queries: [] }),
      ],
    });
    try {
      const x = io();
      const code = await main(
        [
          'explore',
          '--docs',
          join(CORPUS, 'frontier'),
          '--feed',
          join(FEEDS, 'attack-stix.json'),
          '--feed',
          join(FEEDS, 'cve-records.json'),
          '--taxonomy',
          taxonomy,
          '--query',
          'phishing',
          '--budget',
          '1',
          '--out',
          out,
          '--base-url',
          model.url,
          '--model',
          'scripted',
        ],
        x,
      );
      expect(x.errors).toEqual([]);
      expect(code).toBe(0);
      expect(x.lines.at(-2)).toBe(
        'read 1 documents in 1 iteration(s), stopped: budget; created 0, pending 1, updated 0, merged 0, deleted 0, rejected 0, invalid replies 0',
      );
      expect(x.lines.at(-1)).toBe(`trees written to ${taxonomy}; changelog: ${join(out, 'changelog.yaml')}`);
      // The parent "fraud" does not exist in this tree: the candidate waits for it.
      const saved = await Taxonomy.load(taxonomy);
      expect(saved.trees.risks.pending).toEqual([
        {
          path: 'fraud/phishing',
          name: 'Phishing',
          description: 'Messages that lure recipients into giving up access.',
          evidence: ['attack:t1566'],
          terms: ['phishing'],
        },
      ]);
      expect(saved.sources['attack:t1566']).toMatchObject({ kind: 'technique', origin: 'feed:attack-stix.json' });
      const changelog = parse(await readFile(join(out, 'changelog.yaml'), 'utf8')) as {
        stopReason: string;
        entries: Array<{ operation: string; detail: string }>;
      };
      expect(changelog.stopReason).toBe('budget');
      expect(changelog.entries.map((e) => e.operation)).toEqual(['retrieve', 'pending', 'frontier', 'stop']);
      expect(changelog.entries[1]!.detail).toBe('1 of 5 distinct sources; waits for its parent "fraud"');
    } finally {
      await model.close();
      await rm(taxonomy, { recursive: true, force: true });
      await rm(out, { recursive: true, force: true });
    }
  });
});
