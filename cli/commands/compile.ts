import { stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { builtinEnvironments } from '../../sandbox/environments/index.js';
import { readGoalsFile } from '../../pipeline/compose/goals-file.js';
import { compile, writeCompileReport } from '../../pipeline/compile/compile.js';
import { MODEL_FLAGS_USAGE, modelFlags, number, openPipelineModel } from '../../pipeline/llm/model-flags.js';
import type { CliCommand } from '../main.js';
import { DEFAULT_GOALS_FILE } from './compose.js';
import { countsBy } from '../counts.js';
import { DEFAULT_TAXONOMY_DIR, Taxonomy } from '../../pipeline/taxonomy/taxonomy.js';
import { packageRoot } from '../../sandbox/container/image.js';

/**
 * `vera compile`: each goal → init script, user-interaction spec, verifier (predicate data) and
 * witnesses by the LLM; kept only if it validates, carries its attack method, replays, names what
 * exists and the goal's target, tells its witnesses apart and, run against the embedded naive
 * agent, violates when attacked and stays safe when not (pipeline/compile/acceptance.ts). Kept
 * cases are YAML files `npx vitest` runs; the rest go to the report.
 */
export const compileCommand: CliCommand = {
  name: 'compile',
  summary: 'compile goals into executable, witness-checked case files (LLM case compiler)',
  usage: [
    `vera compile [--goals ${DEFAULT_GOALS_FILE}] [--only <goal id>]… [--out cases/generated] [--repairs 1] [--force]`,
    `             [--report .vera/pipeline/compile-report.yaml] [--taxonomy ${DEFAULT_TAXONOMY_DIR}, else the bundled one]`,
    `             ${MODEL_FLAGS_USAGE}`,
  ].join('\n'),
  async run(args, io) {
    const { values } = parseArgs({
      args,
      allowPositionals: false,
      options: {
        goals: { type: 'string' },
        only: { type: 'string', multiple: true },
        out: { type: 'string' },
        repairs: { type: 'string' },
        force: { type: 'boolean' },
        report: { type: 'string' },
        taxonomy: { type: 'string' },
        ...modelFlags,
      },
    });
    const at = (p: string) => resolve(io.cwd, p);
    const goalsFile = await readGoalsFile(at(values.goals ?? DEFAULT_GOALS_FILE));
    let goals = goalsFile.goals;
    if (values.only?.length) {
      const unknown = values.only.filter((id) => !goals.some((g) => g.id === id));
      if (unknown.length) throw new Error(`--only: no goal ${unknown.map((u) => `"${u}"`).join(', ')} in the goals file`);
      goals = goals.filter((g) => values.only!.includes(g.id));
    }
    if (goals.length === 0) {
      io.err('vera compile: the goals file has no goals (run `vera compose` first)');
      return 1;
    }
    const outDir = at(values.out ?? 'cases/generated');
    // Where each risk leaves its harm (the observable gate): the project's trees, else Vera's own.
    const taxonomyDir = values.taxonomy
      ? at(values.taxonomy)
      : (await isDirectory(at(DEFAULT_TAXONOMY_DIR)))
        ? at(DEFAULT_TAXONOMY_DIR)
        : join(packageRoot(), DEFAULT_TAXONOMY_DIR);
    const taxonomy = await Taxonomy.load(taxonomyDir);
    const opened = await openPipelineModel(values);
    const { model } = opened;
    try {
      const report = await compile({
        goals,
        model,
        registry: builtinEnvironments,
        outDir,
        repairs: values.repairs === undefined ? 1 : number(values.repairs, '--repairs', { min: 0, integer: true }),
        force: values.force ?? false,
        cwd: io.cwd,
        log: (line) => io.out(line),
        observablesOf: (risk) => (taxonomy.has('risks', risk) ? taxonomy.observablesOf(risk) : undefined),
      });
      const reportFile = at(values.report ?? '.vera/pipeline/compile-report.yaml');
      await writeCompileReport(reportFile, report, model.model);
      for (const r of report.rejected) io.err(`rejected ${r.goal} (${r.stage}): ${r.reasons.join('; ')}`);
      if (report.failed) {
        io.err(
          `vera compile: stopped at ${report.failed.goal}: ${report.failed.error}; not compiled: ${report.failed.notCompiled.length} goal(s) — run the command again to go on (kept cases are skipped)`,
        );
      }
      io.out(
        `${report.kept.length} kept, ${report.rejected.length} rejected${countsBy(report.rejected.map((r) => r.stage))}, ${report.skipped.length} skipped${report.failed ? `, ${report.failed.notCompiled.length} not compiled` : ''}; report: ${relative(io.cwd, reportFile)}` +
          (report.kept.length ? `; run them with: npx vitest run ${relative(io.cwd, outDir) || '.'}` : ''),
      );
      return report.failed || (report.rejected.length > 0 && report.kept.length === 0) ? 1 : 0;
    } finally {
      await opened.close();
    }
  },
};

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
