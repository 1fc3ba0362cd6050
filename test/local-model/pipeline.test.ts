import { mkdtemp, readFile, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIO } from '../../cli/main.js';
import { readGoalsFile } from '../../pipeline/compose/goals-file.js';
import { REPO } from '../helpers/run-vitest.js';
import { LOCAL_SUITE_MODEL, requireInstalledModel } from './local-suite.js';

/**
 * `vera compose` on five tuples and `vera compile` on (the first two of) the goals it kept, through the CLI with
 * `--base-url local:<model>`: the pipeline's gates meeting a real model's drafts. Every reply is
 * held to its schema's grammar, so none may fail to parse as JSON unless it ran out of tokens;
 * every goal ends kept or rejected at a named gate, and a kept case passes `vera check`. What the
 * gates refused is written to .vera/local-model/pipeline.md.
 */
const TUPLES = Number(process.env.VERA_LOCAL_TUPLES ?? 5);
/** Goals compiled (the first kept ones): a compile takes a few minutes per goal on two cores. */
const COMPILED = Number(process.env.VERA_LOCAL_COMPILE ?? 2);
const REPORT_DIR = join(REPO, '.vera/local-model');

async function cli(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l), cwd: REPO };
  const code = await main(args, io);
  return { code, out, err };
}

describe(`vera compose and compile with the real model (${LOCAL_SUITE_MODEL})`, () => {
  let work: string;
  beforeAll(async () => {
    await requireInstalledModel();
    work = await mkdtemp(join(tmpdir(), 'vera-local-pipeline-'));
  });

  it(`composes goals from ${TUPLES} tuples and compiles them: every reply parses, every goal is kept or refused at a named gate`, async () => {
    const model = ['--base-url', `local:${LOCAL_SUITE_MODEL}`];
    const goalsFile = join(work, 'goals.yaml');
    const composed = await cli(['compose', '--max-tuples', String(TUPLES), '--per-pair', '1', '--demonstrations', '0', '--out', goalsFile, ...model]);
    expect(composed.code, composed.err.join('\n')).toBe(0);
    const goals = await readGoalsFile(goalsFile);
    const considered = goals.goals.length + goals.rejected.length + goals.duplicates.length;
    expect(considered).toBe(TUPLES);
    // Held to the grammar: a composer reply is JSON; what zod still refuses is a finding, not a parse failure.
    const unparsed = goals.rejected.filter((r) => /not a JSON object/.test(r.reason));
    expect(unparsed.map((r) => r.reason)).toEqual([]);

    const lines = [
      `### vera compose, ${TUPLES} tuples`,
      `- kept ${goals.goals.length}, rejected ${goals.rejected.length}, duplicates ${goals.duplicates.length}`,
    ];
    for (const r of goals.rejected) lines.push(`  - ✗ ${r.taxonomy.risk} × ${r.taxonomy.attack} × ${r.taxonomy.environment}: ${r.reason.slice(0, 200)}`);

    if (goals.goals.length > 0) {
      const report = join(work, 'compile-report.yaml');
      const out = join(work, 'cases');
      const chosen = goals.goals.slice(0, COMPILED);
      const compiled = await cli([
        'compile',
        '--goals',
        goalsFile,
        ...chosen.flatMap((g) => ['--only', g.id]),
        '--out',
        out,
        '--repairs',
        '0',
        '--report',
        report,
        ...model,
      ]);
      const result = parse(await readFile(report, 'utf8')) as {
        kept: Array<{ goal: string; file: string }>;
        rejected: Array<{ goal: string; stage: string; reasons: string[] }>;
      };
      expect(result.kept.length + result.rejected.length, compiled.err.join('\n')).toBe(chosen.length);
      for (const r of result.rejected) {
        expect(r.stage, r.goal).toMatch(/^[a-z-]+$/);
        expect(r.reasons.length, r.goal).toBeGreaterThan(0);
      }
      lines.push(
        `### vera compile, ${chosen.length} of the ${goals.goals.length} kept goals`,
        `- kept ${result.kept.length}, rejected ${result.rejected.length}`,
      );
      const stages = new Map<string, number>();
      for (const r of result.rejected) stages.set(r.stage, (stages.get(r.stage) ?? 0) + 1);
      lines.push(`- refused at: ${[...stages].map(([s, n]) => `${s} ${n}`).join(', ') || 'nothing'}`);
      for (const r of result.rejected) lines.push(`  - ✗ ${r.goal} (${r.stage}): ${r.reasons[0]!.slice(0, 200)}`);
      if (result.kept.length > 0) {
        const check = await cli(['check', out]);
        expect(check.code, check.err.join('\n')).toBe(0);
      }
    }
    await mkdir(REPORT_DIR, { recursive: true });
    await writeFile(join(REPORT_DIR, 'pipeline.md'), `${lines.join('\n')}\n`);
    console.log(lines.join('\n'));
  }, 3_600_000);
});
