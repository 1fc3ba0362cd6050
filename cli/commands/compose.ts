import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { builtinEnvironments } from '../../sandbox/environments/index.js';
import { capabilityMap } from '../../pipeline/capabilities.js';
import { compose } from '../../pipeline/compose/compose.js';
import { successfulAttacks, type Demonstration } from '../../pipeline/compose/demonstrations.js';
import { readGoalsFile, writeGoalsFile, type GoalsFile } from '../../pipeline/compose/goals-file.js';
import { MODEL_FLAGS_USAGE, modelFlags, number, openPipelineModel } from '../../pipeline/llm/model-flags.js';
import { DEFAULT_TAXONOMY_DIR, Taxonomy } from '../../pipeline/taxonomy/taxonomy.js';
import type { CliCommand } from '../main.js';
import { countsBy } from '../counts.js';

export const DEFAULT_GOALS_FILE = '.vera/pipeline/goals.yaml';

/**
 * `vera compose`: (risk × attack) pairs, environments sampled with a seed and filtered by the
 * capability map, turned into concrete goals by the LLM goal composer, deduplicated.
 */
export const composeCommand: CliCommand = {
  name: 'compose',
  summary: 'compose verifiable safety goals from taxonomy tuples (LLM goal composer)',
  usage: [
    'vera compose [--seed 1] [--per-pair 10] [--risk <path>]… [--attack <path>]… [--max-tuples <n>] [--demonstrations 3]',
    `             [--goals <existing goals.yaml>] [--records <dir>]… [--taxonomy ${DEFAULT_TAXONOMY_DIR}] [--out ${DEFAULT_GOALS_FILE}]`,
    `             ${MODEL_FLAGS_USAGE}`,
  ].join('\n'),
  async run(args, io) {
    const { values } = parseArgs({
      args,
      allowPositionals: false,
      options: {
        seed: { type: 'string' },
        'per-pair': { type: 'string' },
        risk: { type: 'string', multiple: true },
        attack: { type: 'string', multiple: true },
        'max-tuples': { type: 'string' },
        demonstrations: { type: 'string' },
        goals: { type: 'string' },
        records: { type: 'string', multiple: true },
        taxonomy: { type: 'string' },
        out: { type: 'string' },
        ...modelFlags,
      },
    });
    const at = (p: string) => resolve(io.cwd, p);
    const taxonomy = await Taxonomy.load(at(values.taxonomy ?? DEFAULT_TAXONOMY_DIR));
    for (const [flag, kind, list] of [
      ['--risk', 'risks', values.risk],
      ['--attack', 'attacks', values.attack],
    ] as const) {
      for (const path of list ?? []) if (!taxonomy.has(kind, path)) throw new Error(`${flag} ${path}: no such node in ${kind}.yaml`);
    }
    let existing: GoalsFile | undefined;
    if (values.goals) existing = await readGoalsFile(at(values.goals));
    const attacks: Demonstration[] = [];
    for (const dir of values.records ?? []) attacks.push(...(await successfulAttacks(at(dir))));
    if (values.records?.length) io.out(`${attacks.length} successful attacks found in the records`);

    const opened = await openPipelineModel(values);
    const { model } = opened;
    try {
      const result = await compose({
        taxonomy,
        model,
        registry: builtinEnvironments,
        capabilities: capabilityMap,
        seed: values.seed ?? '1',
        perPair: values['per-pair'] ? number(values['per-pair'], '--per-pair', { min: 1, integer: true }) : 10,
        ...(values.risk?.length ? { risks: values.risk } : {}),
        ...(values.attack?.length ? { attacks: values.attack } : {}),
        ...(values['max-tuples'] ? { maxTuples: number(values['max-tuples'], '--max-tuples', { min: 0, integer: true }) } : {}),
        ...(values.demonstrations ? { demonstrations: number(values.demonstrations, '--demonstrations', { min: 0, integer: true }) } : {}),
        ...(existing ? { existing } : {}),
        successfulAttacks: attacks,
        log: (line) => io.out(line),
      });
      const out = at(values.out ?? values.goals ?? DEFAULT_GOALS_FILE);
      const { failed, ...goalsFile } = result;
      await writeGoalsFile(out, goalsFile);
      const before = existing?.goals.length ?? 0;
      if (failed) {
        io.err(
          `vera compose: stopped at ${failed.tuple}: ${failed.error}; ${failed.notComposed} tuple(s) not composed — run the command again with --goals ${relative(io.cwd, out)} to go on`,
        );
      }
      io.out(
        `${result.goals.length - before} new goals (${result.goals.length} in all), ${result.rejected.length - (existing?.rejected.length ?? 0)} rejected` +
          `${countsBy(result.rejected.slice(existing?.rejected.length ?? 0).map((r) => r.kind ?? 'other'))}, ` +
          `${result.duplicates.length - (existing?.duplicates.length ?? 0)} duplicates, ${result.incompatible.length} incompatible tuples; written to ${out}`,
      );
      return failed ? 1 : 0;
    } finally {
      await opened.close();
    }
  },
};
