/**
 * Where a Vera run's start-up goes: one bundled case × its four threat models through the real
 * Vitest CLI (the first-case workload of bench/scaling.ts), run under `node --cpu-prof`; every
 * thread's profile (Vitest's main thread and the worker that runs the cases) is summarised by
 * self time — per package or project folder, and per function — the flame graph's widest items.
 *   npx tsx bench/startup-profile.ts [--top 12] [--json out.json]      (npm run build first)
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { linkUserNodeModules } from './peers/user-node-modules.mjs';
import { fileURLToPath } from 'node:url';

const REPO = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const top = Number(args[args.indexOf('--top') + 1] || 12);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const dir = await mkdtemp(join(tmpdir(), 'vera-profile-'));
const profiles = join(dir, 'profiles');
await mkdir(join(dir, 'cases'));
await mkdir(profiles);
linkUserNodeModules(dir, REPO);
await writeFile(join(dir, 'cases/first.case.yaml'), await readFile(join(REPO, 'cases/email/forward-reset-code.case.yaml'), 'utf8'));
await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
await writeFile(
  join(dir, 'vitest.config.ts'),
  `import { defineConfig } from 'vitest/config';
import { vera } from 'vera-safety';
export default defineConfig({
  plugins: [vera({ include: ['cases/*.case.yaml'], agent: { type: 'reference', model: 'scripted', baseURL: 'scripted:naive' } })],
  test: { include: [] },
});
`,
);

try {
  const started = performance.now();
  // Worker threads inherit the flag: each thread writes its own profile.
  const result = spawnSync(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${profiles}`, join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=dot'],
    { cwd: dir, encoding: 'utf8' },
  );
  const wallS = (performance.now() - started) / 1000;
  // The naive agent violates the case, so tests fail (exit 1); a crash or a missing run is a failure.
  if (result.status !== 0 && result.status !== 1) {
    console.error(`startup-profile: vitest exited with ${result.status}\n${result.stderr}`);
    process.exit(1);
  }
  if (!/4 (passed|failed)|Tests\s+.*4/.test(result.stdout + result.stderr)) {
    console.error(`startup-profile: expected 4 case-runs\n${result.stdout}\n${result.stderr}`);
    process.exit(1);
  }
  const files = (await readdir(profiles)).filter((f) => f.endsWith('.cpuprofile'));
  const threads = [];
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(profiles, file), 'utf8')) as CpuProfile;
    threads.push(summarise(profile));
  }
  threads.sort((a, b) => b.totalMs - a.totalMs);
  console.log(`start-up profile: one case × 4 threat models through Vitest, ${wallS.toFixed(2)} s wall, ${threads.length} thread profiles`);
  for (const [i, t] of threads.entries()) {
    console.log(`\n  thread ${i + 1}: ${t.totalMs.toFixed(0)} ms profiled (${t.idleMs.toFixed(0)} ms idle, ${t.gcMs.toFixed(0)} ms GC)`);
    console.log('    self time by package or folder:');
    for (const m of t.byModule.slice(0, top)) console.log(`      ${m.ms.toFixed(0).padStart(6)} ms  ${m.name}`);
    console.log('    self time by function:');
    for (const f of t.byFunction.slice(0, top)) console.log(`      ${f.ms.toFixed(0).padStart(6)} ms  ${f.name}`);
  }
  if (jsonOut)
    await writeFile(
      jsonOut,
      `${JSON.stringify({ wallS, threads: threads.map((t) => ({ ...t, byModule: t.byModule.slice(0, top), byFunction: t.byFunction.slice(0, top) })) }, null, 2)}\n`,
    );
} finally {
  await rm(dir, { recursive: true, force: true });
}

/** Self time per node from the samples, then summed by module and by function. */
function summarise(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  const modules = new Map<string, number>();
  const functions = new Map<string, number>();
  let idleMs = 0;
  let gcMs = 0;
  let totalMs = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    totalMs += ms;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') {
      idleMs += ms;
      continue;
    }
    if (functionName === '(garbage collector)') {
      gcMs += ms;
      continue;
    }
    const where = moduleOf(url);
    modules.set(where, (modules.get(where) ?? 0) + ms);
    const name = `${functionName || '(anonymous)'} — ${where}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);
  return { totalMs, idleMs, gcMs, byModule: sorted(modules), byFunction: sorted(functions) };
}

/** `node_modules/<package>` (scoped too), a project folder (`dist/runner`), `node:internals`, or the url. */
function moduleOf(url: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node: internals';
  let path = url;
  try {
    path = url.startsWith('file:') ? fileURLToPath(url) : url;
  } catch {
    return url;
  }
  const at = path.lastIndexOf('/node_modules/');
  if (at >= 0) {
    const parts = path.slice(at + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const rel = relative(REPO, path);
  if (!rel.startsWith('..')) return rel.split('/').slice(0, 2).join('/');
  return path;
}
