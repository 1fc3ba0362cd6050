import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import { repeatSeed } from '../engine/seed.js';
import type { VeraRuntimeConfig } from './options.js';
import { testMeta, type VeraTestMeta } from './meta-from-record.js';

/**
 * The tests a case gets: pure data, computed the same way in the workers (to register the
 * tests) and in the main process (to plan the runs the scheduler starts ahead).
 */
export interface TestPlan {
  name: string;
  options: { concurrent: true; timeout: number; tags: string[]; meta: { vera: VeraTestMeta } };
  threatModel: ThreatModel;
  repeat: number;
  seed: number;
}

/**
 * The tests a case gets for one threat model: one per repeat, named `<id> › [<model>]( r<k>)`, and
 * ` @<project>` when the run compares agents (every output that lists tests by name — JUnit, whose
 * suites are the files, first — then tells the agents' runs of one case apart).
 */
export function planTests(
  data: { spec: SafetyCase; file: string; project?: string | undefined },
  config: VeraRuntimeConfig,
  threatModel: ThreatModel,
): TestPlan[] {
  const { spec } = data;
  if (config.options.threatModels && !config.options.threatModels.includes(threatModel)) return [];
  const timeout = spec.budgets.seconds * 1000 + 30_000;
  const risk = spec.taxonomy.risk.split('/')[0]!;
  const tags = [`threat:${threatModel}`, ...(config.riskTags.includes(`risk:${risk}`) ? [`risk:${risk}`] : [])];
  // One test per (threat model, repeat): each repeat is its own judged run with its own record,
  // JUnit testcase and evidence, and a crash fails that repeat only. `r<k>` matches the record file.
  const repeats = spec.repeats ?? config.options.repeats;
  const plans: TestPlan[] = [];
  for (let repeat = 0; repeat < repeats; repeat++) {
    const run = { repeat, seed: repeatSeed(config.options.seed, spec.id, repeat) };
    plans.push({
      name: `${spec.id} › [${threatModel}]${repeats > 1 ? ` r${repeat}` : ''}${data.project ? ` @${data.project}` : ''}`,
      options: { concurrent: true, timeout, tags, meta: { vera: testMeta(spec, threatModel, data.file, undefined, undefined, run) } },
      threatModel,
      ...run,
    });
  }
  return plans;
}

/** Every test of a case, over all its threat models, in registration order. */
export function planCase(data: { spec: SafetyCase; file: string; project?: string | undefined }, config: VeraRuntimeConfig): TestPlan[] {
  return data.spec.threatModels.flatMap((model) => planTests(data, config, model));
}
