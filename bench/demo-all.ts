/**
 * `npm run demo -- --all` as a user runs it: every bundled case of the library and the
 * hand-written ones × their threat models, naive then guarded, through the Vitest plugin in one
 * process (with the counterfactual re-runs of violations), measured with its process tree: each
 * policy's wall time as the demo prints it, and the peak memory of the whole run. A demo that
 * exits non-zero (a run that could not be judged) gets no time.
 *   npx tsx bench/demo-all.ts [--json out.json]            (npm run build first)
 */
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { measureTree } from './tree-measure.js';

const REPO = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;

const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'VERA_LOCAL_MODEL']) delete env[name];
const m = await measureTree(process.execPath, [join(REPO, 'scripts/demo.mjs'), '--all'], { cwd: REPO, env });
// The demo's last line: "Wall time: naive 52.1 s, guarded 48.0 s. Records: .vera/records/".
const policy = (name: string) => Number(new RegExp(`${name} ([\\d.]+) s`).exec(/Wall time: (.*)/.exec(m.output)?.[1] ?? '')?.[1] ?? Number.NaN);
// Judged runs per policy: the "all" row of each risk-by-threat-model table (five fractions), its last column.
const runs = m.output
  .split('\n')
  .map((line) => (line.startsWith('all ') ? [...line.matchAll(/(\d+)\/(\d+)/g)] : []))
  .filter((fractions) => fractions.length === 5)
  .map((fractions) => Number(fractions.at(-1)![2]));
if (m.code !== 0 || Number.isNaN(policy('naive')) || Number.isNaN(policy('guarded'))) {
  console.error(`npm run demo -- --all FAILED (exit ${m.code}; no time reported):\n${m.output.slice(-2000)}`);
  process.exit(1);
}
const result = { naiveS: policy('naive'), guardedS: policy('guarded'), wallS: m.wallS, peakMB: m.peakMB, judgedPerPolicy: runs };
console.log(
  `npm run demo -- --all: naive ${result.naiveS.toFixed(1)} s, guarded ${result.guardedS.toFixed(1)} s (whole command ${m.wallS.toFixed(1)} s), peak ${m.peakMB.toFixed(0)} MB (process tree)`,
);
if (jsonOut) await writeFile(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
