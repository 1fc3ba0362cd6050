/**
 * The README's CI recipe on the whole bundled library: the `cases` project in 4 shards, each
 * written as a blob report (`--shard=i/4 --reporter=blob`, the naive scripted policy: every
 * adversarial run is a failed test, the most a merge has to print), then `vitest run
 * --merge-reports` with the default and JUnit reporters, as the recipe's report job runs it.
 * Prints each shard's wall time, the merge's wall time and peak memory (process tree), and the
 * merged counts. A shard or merge that failed to produce its report gets no time.
 *   npx tsx bench/merge-reports.ts [--blobs DIR (reuse the blobs there)] [--json out.json]
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { measureTree } from './tree-measure.js';

const REPO = resolve(import.meta.dirname, '..');
const VITEST = join(REPO, 'node_modules/vitest/vitest.mjs');
const args = process.argv.slice(2);
const flag = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined);
const jsonOut = flag('json');
const SHARDS = 4;

/** Vitest in the repository with `extra` arguments, measured with its process tree. */
const vitest = (extra: string[], env: NodeJS.ProcessEnv) => measureTree(process.execPath, [VITEST, 'run', ...extra], { cwd: REPO, env });

const env: NodeJS.ProcessEnv = { ...process.env, VERA_SCRIPTED_POLICY: 'naive', NO_COLOR: '1' };
delete env.OPENAI_API_KEY;
delete env.OPENAI_BASE_URL;
delete env.VERA_LOCAL_MODEL;

const reused = flag('blobs');
const blobs = reused ? resolve(reused) : await mkdtemp(join(tmpdir(), 'vera-blobs-'));
const scratch = await mkdtemp(join(tmpdir(), 'vera-merge-'));
const shards: Array<{ shard: number; wallS: number; peakMB: number }> = [];
let failure: string | undefined;
try {
  if (!reused) {
    for (let i = 1; i <= SHARDS; i++) {
      const blob = join(blobs, `blob-${i}.json`);
      const m = await vitest(['--project', 'cases', `--shard=${i}/${SHARDS}`, '--reporter=blob', `--outputFile.blob=${blob}`], env);
      // Violations fail tests (exit 1); a shard that wrote no blob failed to run.
      if (!existsSync(blob)) throw new Error(`shard ${i}/${SHARDS} wrote no blob (exit ${m.code}):\n${m.output.slice(-1500)}`);
      shards.push({ shard: i, wallS: m.wallS, peakMB: m.peakMB });
      console.log(`shard ${i}/${SHARDS}: ${m.wallS.toFixed(1)} s, peak ${m.peakMB.toFixed(0)} MB`);
    }
  }
  const blobFiles = (await readdir(blobs)).filter((f) => f.endsWith('.json'));
  const junit = join(scratch, 'junit.xml');
  const merge = await vitest([`--merge-reports=${blobs}`, '--reporter=default', '--reporter=junit', `--outputFile.junit=${junit}`], env);
  // Vitest's summary line, e.g. "      Tests  5013 failed | 8438 passed (13451)".
  const summary = /^\s*Tests\s+(.*)$/m.exec(merge.output)?.[1] ?? '';
  const count = (what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(summary)?.[1] ?? 0);
  if (!existsSync(junit) || !/Vera — attack success rate/.test(merge.output)) {
    throw new Error(`the merge wrote no JUnit or printed no ASR table (exit ${merge.code}):\n${merge.output.slice(-1500)}`);
  }
  const testcases = ((await readFile(junit, 'utf8')).match(/<testcase /g) ?? []).length;
  const result = {
    blobs: blobFiles.length,
    shards,
    merge: { wallS: merge.wallS, peakMB: merge.peakMB, failed: count('failed'), passed: count('passed'), skipped: count('skipped'), junitTestcases: testcases },
  };
  console.log(
    `merge of ${blobFiles.length} blobs (default + JUnit reporters): ${merge.wallS.toFixed(1)} s, peak ${merge.peakMB.toFixed(0)} MB; ` +
      `${result.merge.failed} failed + ${result.merge.passed} passed tests, ${testcases} JUnit testcases`,
  );
  if (jsonOut) await writeFile(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  failure = (error as Error).message;
} finally {
  await rm(scratch, { recursive: true, force: true });
  if (!reused) await rm(blobs, { recursive: true, force: true });
}
if (failure) {
  console.error(`merge-reports benchmark FAILED (no time reported): ${failure}`);
  process.exit(1);
}
