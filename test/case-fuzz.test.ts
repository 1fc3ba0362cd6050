/**
 * Bad input never takes the run down: a deterministic corpus of mutants of the bundled case
 * files — fields removed or renamed, wrong types, broken YAML, alias bombs, deep nesting, huge
 * strings, NUL and invalid UTF-8, bad and super-linear regular expressions, unknown operations —
 * each either loads or is refused with problems that name the file and a line (and the field
 * when there is one); none throws or hangs. Then the worst of them sit beside a good case file
 * in a real Vitest run and in `vera check`: each fails alone, named, and the good one runs.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main, type CliIO } from '../cli/main.js';
import { parseCaseSuiteSource } from '../engine/case-loader.js';
import { REPO, runFixture } from './helpers/run-vitest.js';
import { deepBlock, MUTATIONS, rng } from './helpers/case-mutations.js';

async function bundledCases(): Promise<Array<{ name: string; source: string }>> {
  const root = join(REPO, 'cases');
  const out: Array<{ name: string; source: string }> = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    // The hand-written cases (the composed suites are large and all alike in shape).
    if (entry.isFile() && /\.case\.ya?ml$/.test(entry.name) && !relative(root, entry.parentPath).startsWith('bench')) {
      const file = join(entry.parentPath, entry.name);
      out.push({ name: relative(REPO, file), source: await readFile(file, 'utf8') });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

const MUTANTS = 1200;

describe('a fuzz corpus of case-file mutants', () => {
  it(`${MUTANTS} mutants of the bundled cases: each loads or names file:line (and field), none throws`, async () => {
    const seeds = await bundledCases();
    expect(seeds.length).toBeGreaterThan(10);
    const random = rng(20261201);
    const names = Object.keys(MUTATIONS);
    const counts = { loaded: 0, refused: 0, byMutation: {} as Record<string, { loaded: number; refused: number }> };
    let slowest = 0;
    for (let i = 0; i < MUTANTS; i++) {
      const seed = seeds[i % seeds.length]!;
      const name = names[i % names.length]!;
      const source = MUTATIONS[name]!(seed.source, random);
      const file = `mutant-${i}-${seed.name.replace(/[/\\]/g, '_')}`;
      const started = performance.now();
      let result: ReturnType<typeof parseCaseSuiteSource>;
      try {
        result = parseCaseSuiteSource(source, file);
      } catch (error) {
        throw new Error(`mutant ${i} (${name} of ${seed.name}) threw: ${(error as Error).stack}`);
      }
      slowest = Math.max(slowest, performance.now() - started);
      const tally = (counts.byMutation[name] ??= { loaded: 0, refused: 0 });
      if (result.ok) {
        counts.loaded++;
        tally.loaded++;
        continue;
      }
      counts.refused++;
      tally.refused++;
      expect(result.problems.length, `mutant ${i} (${name})`).toBeGreaterThan(0);
      for (const p of result.problems) {
        expect(p.file).toBe(file);
        expect(p.line, `mutant ${i} (${name}): ${p.message}`).toBeGreaterThanOrEqual(1);
        expect(p.column).toBeGreaterThanOrEqual(1);
        expect(p.message.length).toBeGreaterThan(0);
        if (p.field) expect(p.field).not.toMatch(/undefined/);
      }
    }
    console.log(`case fuzz: ${MUTANTS} mutants, ${counts.loaded} loaded, ${counts.refused} refused; slowest parse ${slowest.toFixed(0)} ms`);
    console.log(
      Object.entries(counts.byMutation)
        .map(([n, c]) => `  ${n}: ${c.loaded} loaded, ${c.refused} refused`)
        .join('\n'),
    );
    expect(counts.loaded + counts.refused).toBe(MUTANTS);
    // Every mutation kind is exercised, and the hostile ones are refused every time.
    for (const hostile of ['an alias bomb', 'deep block nesting', 'deep flow nesting', 'an invalid regular expression', 'a non-mapping document']) {
      expect(counts.byMutation[hostile]?.loaded, hostile).toBe(0);
    }
    expect(slowest).toBeLessThan(10_000);
  }, 300_000);
});

describe('the worst mutants beside a good case file', () => {
  let project: string | undefined;
  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('a Vitest run fails each bad file alone, naming it, and the good case runs; vera check goes on past them', async () => {
    await mkdir(join(REPO, '.scratch'), { recursive: true });
    project = await mkdtemp(join(REPO, '.scratch', 'fuzz-'));
    await mkdir(join(project, 'cases'));
    const good = await readFile(join(REPO, 'cases/email/forward-reset-code.case.yaml'), 'utf8');
    const bad: Record<string, string> = {
      'alias-bomb.case.yaml': MUTATIONS['an alias bomb']!(good, rng(1)),
      'deep-block.case.yaml': `${good}\nextra:\n${deepBlock(3000)}\n`,
      'deep-flow.case.yaml': `${good}\nextra: ${'['.repeat(20000)}${']'.repeat(20000)}\n`,
      'nul.case.yaml': good.replace('title:', 'ti\u0000tle:'),
      'bad-regex.case.yaml': good.replace(/^verifier:[\s\S]*?(?=^\w)/m, 'verifier: { response: { matches: "(?=x)y" } }\n'),
      'not-a-case.case.yaml': '- just\n- a list\n',
    };
    for (const [name, text] of Object.entries(bad)) await writeFile(join(project, 'cases', name), text);
    await writeFile(join(project, 'cases/good.case.yaml'), good);
    // Hostile for a backtracking engine, fine for RE2: it loads and runs like any case.
    await writeFile(
      join(project, 'cases/nested-quantifier.case.yaml'),
      MUTATIONS['a super-linear regular expression']!(good, rng(2)).replace('id: forward-reset-code', 'id: nested-quantifier'),
    );
    await writeFile(
      join(project, 'vitest.config.ts'),
      `import { defineConfig } from 'vitest/config';
import { vera } from ${JSON.stringify(join(REPO, 'plugin/index.ts'))};
export default defineConfig({ plugins: [vera({ include: ['cases/*.case.yaml'], agent: { type: 'reference', model: 'scripted', baseURL: 'scripted:guarded', maxRetries: 0 }, recordDir: false })], test: { include: [] } });
`,
    );
    const root = project;
    const run = await runFixture({ root });
    const byFile = new Map(run.files.map((f) => [relative(join(root, 'cases'), f.name), f]));
    expect(
      byFile.get('good.case.yaml')?.assertionResults.map((t) => t.status),
      run.stdout + run.stderr,
    ).toEqual(['passed', 'passed', 'passed', 'passed']);
    // It parses (RE2 runs the pattern in linear time), but its witnesses, written for the original
    // verifier, no longer fit: a file error at load, naming the witness — never a verdict.
    expect(byFile.get('nested-quantifier.case.yaml')?.message).toMatch(
      /nested-quantifier\.case\.yaml:\d+:\d+ witnesses\.violating: the verifier says safe on the violating witness/,
    );
    for (const name of Object.keys(bad)) {
      const file = byFile.get(name);
      expect(file?.status, `${name}\n${run.stdout}\n${run.stderr}`).toBe('failed');
      expect(file?.message, name).toMatch(new RegExp(`${name.replace(/\./g, '\\.')}:\\d+:\\d+`));
    }
    const lines: string[] = [];
    const io: CliIO = { out: (l) => lines.push(l), err: (l) => lines.push(l), cwd: project };
    expect(await main(['check', 'cases'], io)).toBe(1);
    expect(lines).toContain('✓ cases/good.case.yaml');
    for (const name of Object.keys(bad))
      expect(
        lines.some((l) => l.startsWith(`✗ cases/${name}:`)),
        `${name}\n${lines.join('\n')}`,
      ).toBe(true);
    // It loads; its witnesses (written for the original verifier) no longer fit, and check says so.
    expect(
      lines.some((l) => l.startsWith('✗ cases/nested-quantifier.case.yaml') && /witness/.test(l)),
      lines.join('\n'),
    ).toBe(true);
    expect(lines.at(-1)).toBe(`1 of ${Object.keys(bad).length + 2} case files ok`);
  }, 180_000);
});
