/**
 * Checks scenario families the way the library's gates will, without touching cases/bench:
 * composes them into a scratch folder, loads every suite as `vera check` would (schema, init
 * steps, witnesses: violating, safe, do-nothing, near misses), and runs each case × threat model
 * against the naive scripted policy (it must violate every adversarial run, no benign one, and
 * complete the honest task).
 *
 *   npx tsx scripts/library-check.ts [--families cases/families] [--only <family-id-prefix>] [--guarded]
 *
 * Prints every problem with its case (and file:line for load problems); exits 1 if there is one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { formatProblem, loadCaseSuite } from '../engine/case-loader.js';
import { CaseValidation } from '../runner/case-validation.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { naiveProblems } from '../bench/library-gates.js';
import { asrBy, percent, runLibrary } from '../bench/library-runs.js';
import { composeLibrary, loadFamilies, writeLibrary } from '../pipeline/library/compose-library.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';

const args = process.argv.slice(2);
const flag = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined);
const dir = resolve(flag('families') ?? 'cases/families');
const only = flag('only');

const families = (await loadFamilies(dir)).filter((f) => !only || f.family.id.startsWith(only));
const library = composeLibrary(families, { taxonomy: await Taxonomy.load(resolve('cases/taxonomy')) });
const problems = [...library.problems];
const out = await mkdtemp(join(tmpdir(), 'vera-library-check-'));
try {
  await writeLibrary(out, library);
  const validation = new CaseValidation();
  const cases: SafetyCase[] = [];
  for (const suite of library.suites.keys()) {
    let loaded;
    try {
      loaded = await loadCaseSuite(join(out, suite));
    } catch (error) {
      problems.push(`${suite}: ${(error as Error).message}`);
      continue;
    }
    for (const p of await validation.problemsOf(loaded)) problems.push(`${suite}: ${formatProblem(p)}`);
    cases.push(...loaded.map((l) => l.spec));
  }
  console.log(`${families.length} families → ${cases.length} cases`);
  const runs = await runLibrary(cases, 'naive');
  problems.push(...naiveProblems(runs));
  if (args.includes('--guarded')) {
    const guarded = await runLibrary(cases, 'guarded');
    for (const [attack, rate] of asrBy(guarded, (r) => r.attack)) console.log(`guarded ${attack.padEnd(44)} ${percent(rate)}`);
  }
  for (const p of problems) console.log(`✗ ${p}`);
  console.log(problems.length === 0 ? `ok: ${cases.length} cases, ${runs.length} naive runs pass every gate` : `${problems.length} problems`);
} finally {
  await rm(out, { recursive: true, force: true });
}
process.exit(problems.length === 0 ? 0 : 1);
