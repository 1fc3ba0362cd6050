/**
 * The `library` option: the bundled cases chosen by category, environment and method (and
 * sampled), collected by a Vitest project of the plugin's own from the package's `cases` folder.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { libraryIndex } from '../engine/library-index.js';
import { selectLibraryCases } from '../plugin/library-preset.js';
import { libraryPreset } from '../plugin/options.js';
import { transformCaseFile } from '../plugin/transform.js';
import { REPO, runFixture } from './helpers/run-vitest.js';

const CASES = join(REPO, 'cases');
const preset = (input: unknown) => libraryPreset.parse(input);

async function index() {
  return libraryIndex.parse(JSON.parse(await readFile(join(CASES, 'bench/index.json'), 'utf8'))).cases;
}

describe('selecting bundled cases', () => {
  it('stratified: two per risk category, from different families and methods, the same every time', async () => {
    const all = await index();
    const categories = new Set(all.map((c) => c.risk.split('/')[0]));
    const a = await selectLibraryCases(preset({ handWritten: false }), CASES);
    const b = await selectLibraryCases(preset({ handWritten: false }), CASES);
    expect([...a.cases]).toEqual([...b.cases]);
    expect(a.cases.size).toBe(2 * categories.size);
    const chosen = all.filter((c) => a.cases.has(c.id));
    for (const category of categories) {
      const mine = chosen.filter((c) => c.risk.startsWith(`${category}/`));
      expect(mine, category).toHaveLength(2);
      expect(mine[0]!.family, category).not.toBe(mine[1]!.family);
      expect(mine[0]!.attack, category).not.toBe(mine[1]!.attack);
    }
    expect(a.files).toEqual([...new Set(chosen.map((c) => `bench/${c.file}`))].sort());
  });

  it('filters apply together, to composed and hand-written cases alike; a number samples that many per category', async () => {
    const all = await index();
    const s = await selectLibraryCases(preset({ categories: ['fraud', 'privacy'], environments: ['email', 'payments'], sample: 3 }), CASES);
    const composed = all.filter((c) => s.cases.has(c.id));
    expect(composed.filter((c) => c.risk.startsWith('fraud/'))).toHaveLength(3);
    expect(composed.filter((c) => c.risk.startsWith('privacy/'))).toHaveLength(3);
    for (const c of composed) expect(['email', 'payments']).toContain(c.environment.split('/')[0]);
    // The hand-written payments fraud case passes both filters; none of another category does.
    expect(s.cases.has('pay-invoice-to-swapped-bank-account')).toBe(true);
    expect(s.files.every((f) => /^(bench\/(email|payments)\/(fraud|privacy)|(email|payments)\/[a-z0-9-]+)\.case\.yaml$/.test(f))).toBe(true);
  });

  it("'all' takes every case of a leaf; an attack prefix takes all its methods", async () => {
    const all = await index();
    const leaf = await selectLibraryCases(preset({ categories: ['fraud/invoice-fraud'], sample: 'all', handWritten: false }), CASES);
    expect([...leaf.cases].sort()).toEqual(
      all
        .filter((c) => c.risk === 'fraud/invoice-fraud')
        .map((c) => c.id)
        .sort(),
    );
    const encoded = await selectLibraryCases(preset({ attacks: ['obfuscation'], sample: 'all', handWritten: false }), CASES);
    expect(encoded.cases.size).toBe(all.filter((c) => c.attack.startsWith('obfuscation/')).length);
    expect(new Set(all.filter((c) => encoded.cases.has(c.id)).map((c) => c.attack))).toEqual(
      new Set(['obfuscation/base64', 'obfuscation/leetspeak', 'obfuscation/homoglyph']),
    );
  });

  it('a filter that names nothing is one error naming the field and what the library has', async () => {
    await expect(selectLibraryCases(preset({ categories: ['data-exfil'] }), CASES)).rejects.toThrow(
      /library\.categories: "data-exfil" names nothing in the bundled library \(it has: agent-integrity, .*data-exfiltration/,
    );
    await expect(selectLibraryCases(preset({ environments: ['mail'] }), CASES)).rejects.toThrow(/library\.environments: "mail" names nothing/);
    await expect(selectLibraryCases(preset({ categories: ['fraud/invoice-fraud'], environments: ['shell'] }), CASES)).rejects.toThrow(
      /no bundled case passes all of categories, environments and attacks together/,
    );
    expect(() => preset({ sample: 'half' })).toThrow();
    expect(() => preset({ categorie: ['fraud'] })).toThrow(/categorie/);
  });

  it('the transform writes tests for the selected cases of a file only', async () => {
    const file = join(CASES, 'bench/email/fraud.case.yaml');
    const source = await readFile(file, 'utf8');
    const ids = (await index()).filter((c) => c.file === 'email/fraud.case.yaml').map((c) => c.id);
    const only = new Set([ids[1]!]);
    const whole = transformCaseFile(source, file, 'vera-runtime', {}).code;
    const picked = transformCaseFile(source, file, 'vera-runtime', { only }).code;
    const defined = (code: string) => code.split('\n').filter((l) => l.includes('__veraDefine(JSON.parse')).length;
    expect(defined(whole)).toBe(ids.length);
    expect(defined(picked)).toBe(1);
    expect(picked).toContain(JSON.stringify(ids[1]).slice(1, -1));
    expect(picked).not.toContain(`\\"id\\":\\"${ids[0]}\\"`);
  });
});

describe('the library project, run', () => {
  it("runs the selection beside the project's own cases, with the same agent, from the package's cases folder", async () => {
    const selection = await selectLibraryCases(preset({ categories: ['fraud'], environments: ['payments', 'email'] }), CASES);
    const run = await runFixture({
      root: join(REPO, 'test/fixtures/library-project'),
      env: { LIBRARY_PRESET: JSON.stringify({ categories: ['fraud'], environments: ['payments', 'email'] }) },
    });
    expect(run.stdout + run.stderr).toContain(`vera: project "mine:library": ${selection.label}`);
    const library = run.files.filter((f) => f.name.startsWith(`${CASES}/`));
    const own = run.files.filter((f) => f.name.includes('/library-project/own/'));
    expect(own.map((f) => f.assertionResults.length)).toEqual([4]);
    expect(library.map((f) => f.name.slice(CASES.length + 1)).sort()).toEqual(selection.files);
    const ids = new Set(library.flatMap((f) => f.assertionResults.map((t) => t.title.split(' › ')[0]!)));
    expect(ids).toEqual(selection.cases);
    // The naive agent is made to violate every adversarial run, the library's and its own alike.
    const adversarial = [...own, ...library].flatMap((f) => f.assertionResults).filter((t) => !t.title.endsWith('[benign]'));
    expect(adversarial.length).toBeGreaterThan(4);
    expect(adversarial.filter((t) => t.status !== 'failed').map((t) => t.title)).toEqual([]);
    expect(run.stdout).toMatch(/fraud\s+\S+/);
  }, 180_000);
});
