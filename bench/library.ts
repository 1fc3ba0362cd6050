/**
 * The whole bundled library × its four threat models against the embedded scripted model (zero
 * latency), in one process: wall time, peak memory (max RSS), and the library's gates — the naive
 * policy violates every adversarial run and no benign one and completes the honest task; the
 * guarded figures by attack method and risk category.
 *
 *   npx tsx bench/library.ts [--cases cases/bench] [--policy naive|guarded|both] [--concurrency 32] [--json out.json]
 *
 * Exits 1 when a naive gate fails (listing the cases); a failed run's time is never reported.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { resourceUsage } from 'node:process';
import { naiveProblems } from './library-gates.js';
import { asrBy, loadSuites, percent, runLibrary, type LibraryRun } from './library-runs.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback);
const dir = resolve(flag('cases', 'cases/bench'));
const policies = flag('policy', 'both') === 'both' ? (['naive', 'guarded'] as const) : ([flag('policy', 'naive')] as Array<'naive' | 'guarded'>);
const concurrency = Number(flag('concurrency', '32'));
const jsonOut = args.includes('--json') ? flag('json', '') : undefined;

const cases = await loadSuites(dir);
const report: Record<string, unknown> = { cases: cases.length };
let failed = false;
for (const policy of policies) {
  const started = performance.now();
  const runs = await runLibrary(cases, policy, { concurrency });
  const wallS = (performance.now() - started) / 1000;
  const errors = runs.filter((r) => r.error).length;
  const benign = runs.filter((r) => r.threatModel === 'benign');
  const utility = benign.filter((r) => r.utility !== undefined);
  const adversarial = asrBy(runs, () => 'all').get('all') ?? { violated: 0, runs: 0 };
  console.log(`\n━━ ${policy}: ${cases.length} cases, ${runs.length} runs`);
  if (errors > 0) console.log(`${errors} runs ended in an error: no time is reported for this run`);
  else console.log(`wall ${wallS.toFixed(2)} s (${((wallS * 1000) / runs.length).toFixed(2)} ms/run), peak RSS ${(resourceUsage().maxRSS / 1024).toFixed(0)} MB, concurrency ${concurrency}`);
  console.log(`adversarial ASR ${percent(adversarial)} (${adversarial.violated}/${adversarial.runs}); benign violated ${benign.filter((r) => r.status === 'violated').length}/${benign.length}; utility ${utility.filter((r) => r.utility).length}/${utility.length}`);
  for (const [label, key] of [['attack method', (r: LibraryRun) => r.attack], ['risk category', (r: LibraryRun) => r.risk.split('/')[0]!]] as const) {
    console.log(`\nASR by ${label}:`);
    for (const [k, rate] of asrBy(runs, key)) console.log(`  ${k.padEnd(44)} ${percent(rate).padStart(6)}  (${rate.violated}/${rate.runs})`);
  }
  const problems = policy === 'naive' ? naiveProblems(runs) : [];
  if (problems.length > 0) {
    failed = true;
    console.log(`\n${problems.length} naive gate failures:`);
    for (const p of problems.slice(0, 200)) console.log(`  ${p}`);
  }
  report[policy] = {
    runs: runs.length,
    ...(errors === 0 ? { wallS, peakRssMB: resourceUsage().maxRSS / 1024 } : { errors }),
    asr: { all: adversarial, byAttack: Object.fromEntries(asrBy(runs, (r) => r.attack)), byRisk: Object.fromEntries(asrBy(runs, (r) => r.risk.split('/')[0]!)) },
    problems,
  };
}
if (jsonOut) await writeFile(jsonOut, `${JSON.stringify(report, null, 2)}\n`);
process.exit(failed ? 1 : 0);
