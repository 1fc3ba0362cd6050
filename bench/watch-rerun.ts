/**
 * Watch mode: how long an edit to one case takes to rerun it and reprint the ASR tables, against
 * how long Vitest itself takes to rerun a trivial test file it watches in the same session — the
 * difference is what Vera adds to a rerun. One `vitest --watch` process over a project holding
 * the bundled hand-written cases (one file per case, the embedded scripted model, zero latency)
 * in a project of cases only, and one plain test file in a second project; the two kinds of edit alternate for `--rounds` rounds after a warm-up,
 * and the medians are reported. An edit whose rerun does not finish in 60 s fails the benchmark
 * (no time is reported for it).
 *   npx tsx bench/watch-rerun.ts [--rounds 5] [--json out.json] [--print]          (npm run build first)
 */
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { linkUserNodeModules } from './peers/user-node-modules.mjs';
import { quantile } from './quantile.js';

const median = (xs: readonly number[]) => quantile(xs, 0.5);

const REPO = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const rounds = Number(args.includes('--rounds') ? args[args.indexOf('--rounds') + 1] : 5);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;

const dir = await mkdtemp(join(tmpdir(), 'vera-watch-'));
linkUserNodeModules(dir, REPO);
await mkdir(join(dir, 'cases'));
const caseFiles: string[] = [];
for (const folder of ['email', 'files', 'messaging', 'payments']) {
  for (const name of (await readdir(join(REPO, 'cases', folder))).filter((f) => f.endsWith('.case.yaml')).sort()) {
    await cp(join(REPO, 'cases', folder, name), join(dir, 'cases', `${folder}-${name}`));
    caseFiles.push(`${folder}-${name}`);
  }
}
const floorTest = (n: number) => `import { test, expect } from 'vitest';\ntest('floor', () => expect(${n}).toBe(${n}));\n`;
await writeFile(join(dir, 'floor.test.js'), floorTest(0));
await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
await writeFile(
  join(dir, 'vitest.config.ts'),
  `import { defineConfig } from 'vitest/config';
import { vera } from 'vera-safety';
export default defineConfig({
  test: {
    projects: [
      // A project of cases only, as the README sets one up (the plugin tunes it: one worker for all files).
      { plugins: [vera({ include: ['cases/*.case.yaml'], agent: { type: 'reference', model: 'scripted', baseURL: 'scripted:naive' } })], test: { name: 'cases', include: [] } },
      { test: { name: 'plain', include: ['floor.test.js'] } },
    ],
  },
});
`,
);

const TABLE = 'Vera — attack success rate';
// Vitest's last line of a run: "Waiting for file changes" when all passed, "… Watching for file changes" when some failed.
const IDLE = 'for file changes';
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CI: '' };
delete env.OPENAI_API_KEY;
delete env.OPENAI_BASE_URL;
const child = spawn(process.execPath, [join(REPO, 'node_modules/vitest/vitest.mjs'), '--watch'], {
  cwd: dir,
  env,
  stdio: ['pipe', 'pipe', 'pipe'],
});
let out = '';
child.stdout.on('data', (d: Buffer) => (out += d.toString()));
child.stderr.on('data', (d: Buffer) => (out += d.toString()));
const count = (marker: string) => out.split(marker).length - 1;

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 60_000;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; the last output:\n${out.slice(-2000)}`);
    if (child.exitCode !== null) throw new Error(`vitest exited (${child.exitCode}) waiting for ${what}:\n${out.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Writes `file` and returns the seconds until Vitest is idle again (and, for a case, the tables were printed again). */
async function edit(file: string, content: string, reprintsTables: boolean): Promise<number> {
  const [idle, tables] = [count(IDLE), count(TABLE)];
  const started = performance.now();
  await writeFile(join(dir, file), content);
  await waitFor(() => count(IDLE) > idle && (!reprintsTables || count(TABLE) > tables), `the rerun after editing ${file}`);
  return (performance.now() - started) / 1000;
}

const vitestRerun: number[] = [];
const caseRerun: number[] = [];
let failure: string | undefined;
try {
  await waitFor(() => count(IDLE) >= 1 && count(TABLE) >= 1, 'the first run');
  const edited = caseFiles[0]!;
  const source = await readFile(join(dir, 'cases', edited), 'utf8');
  // Round 0 warms both paths; it is not counted.
  for (let round = 0; round <= rounds; round++) {
    const v = await edit('floor.test.js', floorTest(round + 1), false);
    // A comment at the end: the case's content is the same, so its verdicts are too.
    const c = await edit(join('cases', edited), `${source}\n# watch edit ${round}\n`, true);
    if (round > 0) {
      vitestRerun.push(v);
      caseRerun.push(c);
    }
  }
} catch (error) {
  failure = (error as Error).message;
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('close', r));
  await rm(dir, { recursive: true, force: true });
}

// With --print, the last rerun's output (Vitest's duration line says where its time went).
if (args.includes('--print')) console.log(out.slice(Math.max(0, out.lastIndexOf('RERUN'))));
if (failure) {
  console.error(`watch rerun benchmark FAILED (no time reported): ${failure}`);
  process.exit(1);
}
const result = {
  cases: caseFiles.length,
  rounds,
  vitestRerunS: median(vitestRerun),
  caseRerunS: median(caseRerun),
  addedS: median(caseRerun) - median(vitestRerun),
};
console.log(`${caseFiles.length} case files watched; one edited per round, ${rounds} rounds (medians):`);
console.log(`  Vitest's own rerun of a trivial test file   ${result.vitestRerunS.toFixed(3)} s`);
console.log(`  rerun of the edited case + the ASR tables   ${result.caseRerunS.toFixed(3)} s`);
console.log(`  what Vera adds                              ${result.addedS.toFixed(3)} s`);
if (jsonOut) await writeFile(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
