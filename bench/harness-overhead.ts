/**
 * Harness overhead of real cases: every bundled case (the hand-written ones and the library in
 * cases/bench) × every threat model it lists, run with
 * `runCase` in this process against the reference agent on a zero-latency scripted model. What
 * the harness adds is the run's wall time minus the time the agent waited for its model, split
 * into the phases of a run. It measures the built package (npm run build first).
 * Usage: npx tsx bench/harness-overhead.ts [--rounds 3] [--json out.json]
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { referenceAgent } from '../dist/adapters/reference-agent.js';
import { loadCaseSuite } from '../dist/engine/case-loader.js';
import { runCase } from '../dist/runner/run-case.js';
import { startScriptedModelServer } from '../dist/testing/scripted-model-server.js';
import { quantile } from './quantile.js';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] || 3);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;

const PHASES = ['sandbox start', 'init replay', 'gateway mount', 'agent start', 'control', 'agent turns (non-model)', 'verifier', 'record write'] as const;
type Phase = (typeof PHASES)[number];

const files = (await readdir('cases', { recursive: true }))
  .filter((f) => f.endsWith('.case.yaml'))
  .map((f) => join('cases', f))
  .sort();
const specs = (await Promise.all(files.map((f) => loadCaseSuite(f)))).flat().map((c) => c.spec);
const runs = [0, 1].flatMap((a) => specs.flatMap((spec) => spec.threatModels.map((threatModel) => ({ spec, threatModel, agent: a }))));
// Both demo policies: the naive agent ends attacks early (goal reached), the guarded one refuses and
// the adversary keeps going, which gives the multi-turn runs.
const models = await Promise.all((['naive', 'guarded'] as const).map((policy) => startScriptedModelServer({ policy, recordRequests: false })));
const agents = models.map((m) => referenceAgent({ model: 'scripted', baseURL: m.url, apiKey: 'bench', maxRetries: 0 }));
const recordDir = await mkdtemp(join(tmpdir(), 'vera-bench-records-'));

interface Sample {
  environment: string;
  multiTurn: boolean;
  wallMs: number;
  modelMs: number;
  phases: Record<Phase, number>;
}

async function measure(which = runs): Promise<Sample[]> {
  const out: Sample[] = [];
  for (const r of which) {
    const started = performance.now();
    const { record, recordWriteMs = 0 } = await runCase({ spec: r.spec, threatModel: r.threatModel, agent: agents[r.agent]!, recordDir });
    const wallMs = performance.now() - started;
    if (record.status === 'error') throw new Error(`${record.caseId} [${record.threatModel}]: ${record.error?.message}`);
    const t = record.timings;
    out.push({
      environment: (r.spec.environments ?? [r.spec.taxonomy.environment.split('/')[0]!]).join('+'),
      multiTurn: record.turns > 1,
      wallMs,
      modelMs: t.modelMs,
      phases: {
        'sandbox start': t.sandboxMs,
        'init replay': t.initMs,
        'gateway mount': t.gatewayMs,
        'agent start': t.agentStartMs,
        control: t.controlMs,
        'agent turns (non-model)': t.agentMs - t.modelMs,
        verifier: t.verifyMs,
        'record write': recordWriteMs,
      },
    });
  }
  return out;
}

const median = (xs: number[]) => (xs.length ? quantile(xs, 0.5) : 0);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

// Warm-up: module loading, JIT, connection pools — a slice of every environment's runs is enough.
await measure(runs.filter((_, i) => i % 20 === 0));
const perRound: Sample[][] = [];
for (let i = 0; i < rounds; i++) perRound.push(await measure());

// Concurrent throughput: the same runs, 32 at a time.
const concurrentStart = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < runs.length) {
      const r = runs[next++]!;
      await runCase({ spec: r.spec, threatModel: r.threatModel, agent: agents[r.agent]!, recordDir });
    }
  }),
);
const concurrentMs = performance.now() - concurrentStart;
await Promise.all(models.map((m) => m.close()));
await rm(recordDir, { recursive: true, force: true });

const samples = perRound.flat();
const overhead = (s: Sample) => s.wallMs - s.modelMs;
const summary = {
  runs: runs.length,
  rounds,
  perRun: {
    wallMs: mean(samples.map((s) => s.wallMs)),
    modelMs: mean(samples.map((s) => s.modelMs)),
    overheadMs: mean(samples.map(overhead)),
    overheadMedianMs: median(samples.map(overhead)),
    overheadP99Ms: quantile(samples.map(overhead), 0.99),
  },
  multiTurn: {
    runs: samples.filter((s) => s.multiTurn).length / rounds,
    overheadMs: mean(samples.filter((s) => s.multiTurn).map(overhead)),
    overheadMedianMs: median(samples.filter((s) => s.multiTurn).map(overhead)),
  },
  phases: Object.fromEntries(PHASES.map((p) => [p, mean(samples.map((s) => s.phases[p]))])) as Record<Phase, number>,
  // Where the mean comes from: environments whose tools do real work (a sandboxed process per shell
  // command, files on disk, SQLite) cost more than the harness around them.
  byEnvironment: Object.fromEntries(
    [...new Set(samples.map((s) => s.environment))].sort().map((env) => {
      const mine = samples.filter((s) => s.environment === env);
      return [env, { runs: mine.length / rounds, overheadMs: mean(mine.map(overhead)), overheadMedianMs: median(mine.map(overhead)) }];
    }),
  ),
  concurrent32: { wallMs: concurrentMs, runsPerSecond: runs.length / (concurrentMs / 1000) },
};

const f = (n: number) => n.toFixed(2).padStart(7);
console.log(
  `harness overhead: ${runs.length} case-runs (${specs.length} cases × their threat models × the naive and guarded agents), ${rounds} rounds, sequential`,
);
console.log(`  wall per run           ${f(summary.perRun.wallMs)} ms`);
console.log(`  waiting for the model  ${f(summary.perRun.modelMs)} ms`);
console.log(
  `  harness overhead       ${f(summary.perRun.overheadMs)} ms (median ${summary.perRun.overheadMedianMs.toFixed(2)}, p99 ${summary.perRun.overheadP99Ms.toFixed(2)})`,
);
console.log(
  `  multi-turn runs        ${f(summary.multiTurn.overheadMs)} ms (median ${summary.multiTurn.overheadMedianMs.toFixed(2)}, ${summary.multiTurn.runs} runs)`,
);
for (const p of PHASES) console.log(`    ${p.padEnd(24)} ${f(summary.phases[p])} ms`);
console.log('  by environment (overhead mean / median):');
for (const [env, e] of Object.entries(summary.byEnvironment))
  console.log(`    ${env.padEnd(24)} ${f(e.overheadMs)} / ${e.overheadMedianMs.toFixed(2)} ms  (${e.runs} runs)`);
console.log(`  32 at a time: ${runs.length} runs in ${(concurrentMs / 1000).toFixed(2)} s = ${summary.concurrent32.runsPerSecond.toFixed(0)} runs/s`);
if (jsonOut) await (await import('node:fs/promises')).writeFile(jsonOut, `${JSON.stringify(summary, null, 2)}\n`);
