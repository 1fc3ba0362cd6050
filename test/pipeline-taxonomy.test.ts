import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { findFiles } from '../cli/find-files.js';
import { loadCaseSuite } from '../engine/case-loader.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';
import { treeKinds } from '../pipeline/taxonomy/taxonomy-schema.js';
import { builtinEnvironments } from '../sandbox/environments/index.js';
import { REPO } from './helpers/run-vitest.js';

/** The taxonomy shipped under cases/taxonomy/: valid, grounded in public frameworks, and covering the bundled cases. */
const DIR = join(REPO, 'cases/taxonomy');
let taxonomy: Taxonomy;
beforeAll(async () => {
  taxonomy = await Taxonomy.load(DIR);
});

describe('the shipped taxonomy', () => {
  it("covers every bundled case's risk, attack and environment", async () => {
    const missing: string[] = [];
    const files = await findFiles(['cases'], /\.case\.ya?ml$/, REPO);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      for (const { spec } of await loadCaseSuite(file)) {
        const refs = [
          ['risks', spec.taxonomy.risk],
          ['attacks', spec.taxonomy.attack],
          ['environments', spec.taxonomy.environment],
        ] as const;
        for (const [kind, path] of refs) {
          if (!taxonomy.has(kind, path))
            missing.push(
              `${file.slice(REPO.length + 1)}: ${spec.id}: "${path}" is not in cases/taxonomy/${kind}.yaml — add the node (id, name, description, evidence, references) or use an existing id`,
            );
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('every risk category declares where its harm shows; words are the harm only for deception and harmful content', () => {
    const categories = taxonomy.leaves('risks').map((l) => l.path.split('/')[0]!);
    for (const category of new Set(categories)) expect(taxonomy.find('risks', category)?.node.observables, category).toBeDefined();
    const wordy = [...new Set(categories)].filter((c) => taxonomy.observablesOf(c).includes('response'));
    expect(wordy.sort()).toEqual(['deception', 'harmful-content']);
    // A leaf inherits its branch's; a deletion is seen in the state, not in the call that asked for it.
    expect(taxonomy.observablesOf('data-exfiltration/credential-leak')).toEqual(taxonomy.observablesOf('data-exfiltration'));
    expect(taxonomy.observablesOf('unauthorized-action/destructive-deletion')).toEqual(['state']);
  });

  it('has a node for every environment in the sandbox registry', () => {
    expect(Object.keys(builtinEnvironments).filter((name) => !taxonomy.has('environments', name))).toEqual([]);
  });

  it('every node has evidence registered in sources.yaml; the sources include OWASP and MITRE entries with URLs', () => {
    const frameworks = new Set<string>();
    const FRAMEWORK_URLS: Array<[string, RegExp]> = [
      ['MITRE ATLAS', /^https:\/\/atlas\.mitre\.org\//],
      ['MITRE ATT&CK', /^https:\/\/attack\.mitre\.org\//],
      ['OWASP Top 10 for LLM Applications 2025', /^https:\/\/genai\.owasp\.org\/llmrisk\//],
      ['OWASP Agentic AI threats', /^https:\/\/github\.com\/OWASP\/|^https:\/\/genai\.owasp\.org\/resource\/agentic/i],
    ];
    for (const kind of treeKinds) {
      for (const { path, node } of taxonomy.walk(kind)) {
        expect(node.evidence.length, `${kind}:${path} evidence`).toBeGreaterThan(0);
        // Nodes resting on seed sources only cite the frameworks they rest on (nodes built from documents cite those).
        if (node.evidence.every((id) => taxonomy.sources[id]?.origin === 'seed'))
          expect(node.references.length, `${kind}:${path} references`).toBeGreaterThan(0);
        for (const id of node.evidence) {
          const source = taxonomy.sources[id];
          expect(source, `${kind}:${path} cites ${id}`).toBeDefined();
          for (const [framework, url] of FRAMEWORK_URLS) if (source?.url && url.test(source.url)) frameworks.add(framework);
        }
      }
      expect(taxonomy.trees[kind].pending).toEqual([]);
    }
    expect([...frameworks].sort()).toEqual(FRAMEWORK_URLS.map(([f]) => f).sort());
  });

  it('round-trips: saving what was loaded writes the same bytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-taxonomy-rt-'));
    try {
      await taxonomy.save(dir);
      for (const name of ['risks', 'attacks', 'environments', 'sources', 'exploration']) {
        expect(await readFile(join(dir, `${name}.yaml`), 'utf8'), name).toBe(await readFile(join(DIR, `${name}.yaml`), 'utf8'));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a bad tree file is one error naming the file, line and field; evidence must be registered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-taxonomy-bad-'));
    try {
      await cp(DIR, dir, { recursive: true });
      const risks = await readFile(join(dir, 'risks.yaml'), 'utf8');
      await writeFile(join(dir, 'risks.yaml'), risks.replace('  - id: data-exfiltration\n', '  - id: Data Exfiltration\n'));
      await expect(Taxonomy.load(dir)).rejects.toThrow(/risks\.yaml:7 nodes\[0\]\.id: a node id is lower-case letters, digits and "-"$/);
      // The first evidence entry of the first node names a source nobody registered.
      await writeFile(join(dir, 'risks.yaml'), risks.replace(/(evidence:\s*(?:\[\s*|\n\s*- ))[^\s,\]]+/, '$1nowhere-1'));
      await expect(Taxonomy.load(dir)).rejects.toThrow('risks.yaml: node "data-exfiltration" cites source "nowhere-1", which sources.yaml does not list');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
