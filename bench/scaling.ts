/**
 * Scaling: N case-runs (a bundled multi-turn email case, cloned into one suite file, × its four
 * threat models) through the real Vitest CLI with the plugin, the reference agent and the
 * embedded scripted model at zero latency. Wall time and the peak memory of the whole process
 * tree must grow linearly or better. Usage: npx tsx bench/scaling.ts [--sizes 100,400,1600]
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { linkUserNodeModules } from './peers/user-node-modules.mjs';
import { measureTree } from './tree-measure.js';

const REPO = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const sizes = (args.includes('--sizes') ? args[args.indexOf('--sizes') + 1]! : '100,400,1600').split(',').map(Number);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;

async function project(runs: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `vera-scale-${runs}-`));
  await mkdir(join(dir, 'cases'));
  linkUserNodeModules(dir, REPO);
  const source = await readFile(join(REPO, 'cases/email/forward-reset-code.case.yaml'), 'utf8');
  const copies = Math.ceil(runs / 4);
  const docs = Array.from({ length: copies }, (_, i) => source.replace('id: forward-reset-code', `id: forward-reset-code-${i}`));
  await writeFile(join(dir, 'cases/scale.case.yaml'), docs.join('---\n'));
  await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
  await writeFile(
    join(dir, 'vitest.config.ts'),
    `import { defineConfig } from 'vitest/config';
import { vera } from 'vera-safety';
export default defineConfig({
  plugins: [vera({ include: ['cases/*.case.yaml'], agent: { type: 'reference', model: 'scripted', baseURL: 'scripted:naive' }, concurrency: 32 })],
  test: { include: [] },
});
`,
  );
  return dir;
}

/** One Vitest run of the project, measured with its process tree; a run that wrote no report measured nothing. */
async function measure(cwd: string): Promise<{ wallS: number; peakMB: number; tests: number; code: number | null }> {
  const m = await measureTree(process.execPath, [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=json', '--outputFile.json=report.json'], {
    cwd,
    env: process.env,
  });
  const report = await readFile(join(cwd, 'report.json'), 'utf8').catch(() => undefined);
  if (!report) throw new Error(`the run wrote no report (exit ${m.code}): no time is reported\n${m.output.slice(-1500)}`);
  return { wallS: m.wallS, peakMB: m.peakMB, tests: (JSON.parse(report) as { numTotalTests: number }).numTotalTests, code: m.code };
}

const rows: Array<{ runs: number; wallS: number; msPerRun: number; peakMB: number }> = [];
for (const n of sizes) {
  const dir = await project(n);
  try {
    const m = await measure(dir);
    if (m.tests !== Math.ceil(n / 4) * 4) throw new Error(`expected ${Math.ceil(n / 4) * 4} tests, got ${m.tests}`);
    rows.push({ runs: m.tests, wallS: m.wallS, msPerRun: (m.wallS * 1000) / m.tests, peakMB: m.peakMB });
    console.log(
      `${String(m.tests).padStart(5)} case-runs  ${m.wallS.toFixed(2).padStart(6)} s  ${((m.wallS * 1000) / m.tests).toFixed(2).padStart(6)} ms/run  peak ${m.peakMB.toFixed(0).padStart(5)} MB`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
const first = rows[0]!;
for (const r of rows.slice(1)) {
  console.log(
    `  ${r.runs}/${first.runs} = ${(r.runs / first.runs).toFixed(0)}× the runs: ${(r.wallS / first.wallS).toFixed(2)}× the time, ${(r.peakMB / first.peakMB).toFixed(2)}× the memory`,
  );
}
if (jsonOut) await writeFile(jsonOut, `${JSON.stringify(rows, null, 2)}\n`);
