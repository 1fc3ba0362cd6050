/**
 * The whole bundled library × its four threat models against the embedded scripted model (zero
 * latency): wall time, peak memory, and the library's gates — the naive policy violates every
 * adversarial run and no benign one and completes the honest task; the guarded figures by attack
 * method and risk category.
 *
 *   npx tsx bench/library.ts [--cases cases/bench] [--policy naive|guarded|both] [--workers N] [--concurrency 32] [--json out.json]
 *
 * The suite files are split over `--workers` processes (default: one per core), each loading its
 * files and running them `--concurrency` at a time against its own scripted model server. Wall time
 * is from the first process started to the last one done, loading included; peak memory is the sum
 * of the processes' maximum RSS (an upper bound of the tree's peak). Exits 1 when a naive gate fails
 * (listing the cases); a policy whose runs ended in errors gets no time.
 */
import { spawn } from 'node:child_process';
import { readFile, stat, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resourceUsage } from 'node:process';
import { naiveProblems } from './library-gates.js';
import { asrBy, loadSuites, percent, runLibrary, suiteFiles, type LibraryRun } from './library-runs.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback);
const dir = resolve(flag('cases', 'cases/bench'));
const concurrency = Number(flag('concurrency', '32'));

interface ShardResult {
  cases: number;
  runs: LibraryRun[];
  maxRssMB: number;
}

// A worker: run the given files against one policy, write the runs.
if (args.includes('--shard-files')) {
  const files = JSON.parse(await readFile(flag('shard-files', ''), 'utf8')) as string[];
  const cases = await loadSuites(dir, files);
  const runs = await runLibrary(cases, flag('policy', 'naive') as 'naive' | 'guarded', { concurrency });
  const result: ShardResult = { cases: cases.length, runs, maxRssMB: resourceUsage().maxRSS / 1024 };
  await writeFile(flag('out', ''), JSON.stringify(result));
  process.exit(0);
}

const policies = flag('policy', 'both') === 'both' ? (['naive', 'guarded'] as const) : ([flag('policy', 'naive')] as Array<'naive' | 'guarded'>);
const workers = Math.max(1, Number(flag('workers', String(availableParallelism()))));
const jsonOut = args.includes('--json') ? flag('json', '') : undefined;

/** The files split into `n` groups of about equal size (largest first, each to the lightest group). */
async function shards(n: number): Promise<string[][]> {
  const sized = await Promise.all((await suiteFiles(dir)).map(async (f) => ({ f, size: (await stat(f)).size })));
  const groups = Array.from({ length: n }, () => ({ files: [] as string[], size: 0 }));
  for (const { f, size } of sized.sort((a, b) => b.size - a.size || (a.f < b.f ? -1 : 1))) {
    const lightest = groups.reduce((a, b) => (b.size < a.size ? b : a));
    lightest.files.push(f);
    lightest.size += size;
  }
  return groups.map((g) => g.files.sort()).filter((g) => g.length > 0);
}

async function runPolicy(policy: 'naive' | 'guarded'): Promise<{ runs: LibraryRun[]; cases: number; wallS: number; peakMB: number }> {
  const scratch = await mkdtemp(join(tmpdir(), 'vera-library-bench-'));
  try {
    const groups = await shards(workers);
    const started = performance.now();
    const results = await Promise.all(
      groups.map(async (files, i) => {
        const list = join(scratch, `files-${i}.json`);
        const out = join(scratch, `runs-${i}.json`);
        await writeFile(list, JSON.stringify(files));
        const child = spawn(
          process.execPath,
          [
            ...process.execArgv,
            process.argv[1]!,
            '--cases',
            dir,
            '--policy',
            policy,
            '--concurrency',
            String(concurrency),
            '--shard-files',
            list,
            '--out',
            out,
          ],
          { stdio: ['ignore', 'inherit', 'inherit'] },
        );
        const code = await new Promise<number | null>((done) => child.on('close', done));
        if (code !== 0) throw new Error(`worker ${i} exited ${code}`);
        return JSON.parse(await readFile(out, 'utf8')) as ShardResult;
      }),
    );
    const wallS = (performance.now() - started) / 1000;
    return {
      runs: results.flatMap((r) => r.runs),
      cases: results.reduce((n, r) => n + r.cases, 0),
      wallS,
      peakMB: results.reduce((n, r) => n + r.maxRssMB, 0),
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const report: Record<string, unknown> = {};
let failed = false;
for (const policy of policies) {
  const { runs, cases, wallS, peakMB } = await runPolicy(policy);
  report.cases = cases;
  const errors = runs.filter((r) => r.error).length;
  const benign = runs.filter((r) => r.threatModel === 'benign');
  const utility = benign.filter((r) => r.utility !== undefined);
  const adversarial = asrBy(runs, () => 'all').get('all') ?? { violated: 0, runs: 0 };
  console.log(`\n━━ ${policy}: ${cases} cases, ${runs.length} runs`);
  if (errors > 0) console.log(`${errors} runs ended in an error: no time is reported for this policy`);
  else
    console.log(
      `wall ${wallS.toFixed(2)} s (${((wallS * 1000) / runs.length).toFixed(2)} ms/run), peak RSS ${peakMB.toFixed(0)} MB, ${workers} processes × ${concurrency} runs at a time`,
    );
  console.log(
    `adversarial ASR ${percent(adversarial)} (${adversarial.violated}/${adversarial.runs}); benign violated ${benign.filter((r) => r.status === 'violated').length}/${benign.length}; utility ${utility.filter((r) => r.utility).length}/${utility.length}`,
  );
  for (const [label, key] of [
    ['attack method', (r: LibraryRun) => r.attack],
    ['risk category', (r: LibraryRun) => r.risk.split('/')[0]!],
  ] as const) {
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
    workers,
    ...(errors === 0 ? { wallS, peakRssMB: peakMB } : { errors }),
    asr: {
      all: adversarial,
      byAttack: Object.fromEntries(asrBy(runs, (r) => r.attack)),
      byRisk: Object.fromEntries(asrBy(runs, (r) => r.risk.split('/')[0]!)),
    },
    problems,
  };
}
if (jsonOut) await writeFile(jsonOut, `${JSON.stringify(report, null, 2)}\n`);
process.exit(failed ? 1 : 0);
