/**
 * 1000 mutant case files — syntactic (from the fuzz corpus) and the slips a real author makes (an
 * init step one character off, a misspelt tool, an argument no tool takes, a task cut by " #") — of
 * the bundled library, all in one project: `vera check` names every broken file with file:line and
 * goes on; one real `vitest run` over all of them ends (no abort, no hang), fails each broken file
 * alone with file:line, and runs the rest. The figures go into docs/security.md.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { MUTATIONS, rng, type Mutation } from '../helpers/case-mutations.js';
import { REPO, runFixture } from '../helpers/run-vitest.js';

const COUNT = 1000;

/** What an author gets wrong, on a real library case. */
const SLIPS: Record<string, Mutation> = {
  'an init repository one character off': (s) => s.replace(/(\brepo: [a-z-]+\/[a-z-]+?)([a-z])\b/, '$1$2x'),
  'a misspelt injection tool': (s) => s.replace(/(injections:\n\s+- id: [\w-]+\n\s+tool: )(\w+)/, '$1$2s'),
  'an argument no tool takes': (s) => s.replace(/(violating:\n\s+calls:\n\s+- tool: \w+\n\s+args: \{ )/, '$1destinaton: x, '),
  'a task cut by " #"': (s) => s.replace(/^task: (.*)$/m, (_m, t: string) => `task: ${t.replace(/^"|"$/g, '').replace(/[?.]$/, '')} #please`),
  'an unknown field': (s) => s.replace(/^threatModels:/m, 'threatModel:'),
  'an id too long for a file name': (s) => s.replace(/^id: (.*)$/m, (_m, id: string) => `id: ${id}${'-x'.repeat(70)}`),
};

/** One case document of each composed suite file, with its own id. */
async function libraryCases(): Promise<string[]> {
  const out: string[] = [];
  const root = join(REPO, 'cases/bench');
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.case.yaml')) continue;
    const docs = (await readFile(join(entry.parentPath, entry.name), 'utf8')).split(/^---$/m).map((d) => d.replace(/^#.*\n/gm, '').trimStart());
    out.push(...docs.filter((_, i) => i % 7 === 0));
  }
  return out;
}

let project: string | undefined;
afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe(`${COUNT} mutant case files`, () => {
  it('vera check names every broken one with file:line and goes on; one vitest run ends, failing each alone with file:line', async () => {
    await mkdir(join(REPO, '.scratch'), { recursive: true });
    project = await mkdtemp(join(REPO, '.scratch', 'mutants-'));
    const cases = join(project, 'cases');
    await mkdir(cases);
    const seeds = await libraryCases();
    const random = rng(20261202);
    const kinds = { ...MUTATIONS, ...SLIPS };
    const names = Object.keys(kinds);
    for (let i = 0; i < COUNT; i++) {
      const seed = seeds[(i * 7) % seeds.length]!;
      const kind = names[i % names.length]!;
      // Each mutant keeps an id of its own (a suite-wide duplicate would be another error).
      const source = kinds[kind]!(seed.replace(/^id: (.*)$/m, `id: m${i}-$1`), random);
      await writeFile(join(cases, `m${String(i).padStart(4, '0')}.case.yaml`), source);
    }

    // vera check: every file named, every ✗ with its line.
    const lines: string[] = [];
    const started = performance.now();
    const code = await main(['check', 'cases'], { out: (l) => lines.push(l), err: (l) => lines.push(l), cwd: project });
    const checkSeconds = (performance.now() - started) / 1000;
    expect([0, 1]).toContain(code);
    const failed = lines.filter((l) => l.startsWith('✗ '));
    const ok = lines.filter((l) => l.startsWith('✓ '));
    const failedFiles = new Set(failed.map((l) => /^✗ (cases\/m\d+\.case\.yaml)/.exec(l)?.[1]));
    expect(
      failedFiles.has(undefined),
      failed
        .filter((l) => !/^✗ cases\/m\d+\.case\.yaml/.test(l))
        .slice(0, 3)
        .join('\n'),
    ).toBe(false);
    const withLine = failed.filter((l) => /^✗ cases\/m\d+\.case\.yaml:\d+(:\d+)? /.test(l));
    expect(ok.length + failedFiles.size).toBe(COUNT);
    expect(
      withLine.length,
      failed
        .filter((l) => !/:\d+(:\d+)? /.test(l))
        .slice(0, 5)
        .join('\n'),
    ).toBe(failed.length);

    // One real Vitest run over all of them: it ends, and every file has its own result.
    await writeFile(
      join(project, 'vitest.config.ts'),
      `import { defineConfig } from 'vitest/config';
import { vera } from ${JSON.stringify(join(REPO, 'plugin/index.ts'))};
export default defineConfig({ plugins: [vera({ include: ['cases/*.case.yaml'], agent: { type: 'reference', model: 'scripted', baseURL: 'scripted:naive', maxRetries: 0 }, recordDir: false, report: false })], test: { include: [] } });
`,
    );
    const runStarted = performance.now();
    const run = await runFixture({ root: project });
    const runSeconds = (performance.now() - runStarted) / 1000;
    expect(run.files.length, run.stderr.slice(-2000)).toBe(COUNT);
    const broken = run.files.filter((f) => f.status === 'failed' && f.assertionResults.length === 0);
    for (const f of broken) expect(f.message, relative(project, f.name)).toMatch(/m\d+\.case\.yaml:\d+:\d+/);
    const ran = run.files.filter((f) => f.assertionResults.length > 0);
    // What vera check refused, the run refused; what it passed, the run ran.
    expect(broken.length).toBe(failedFiles.size);
    expect(ran.length).toBe(ok.length);
    const figures = `mutants: ${COUNT} files (${names.length} kinds); vera check ${checkSeconds.toFixed(1)} s: ${ok.length} ok, ${failedFiles.size} refused, ${withLine.length}/${failed.length} problems with file:line; vitest run ${runSeconds.toFixed(1)} s: 0 aborts, 0 hangs, ${broken.length} files failed alone (all with file:line), ${ran.length} ran`;
    console.log(figures);
  }, 1_500_000);
});
