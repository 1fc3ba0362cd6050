import type { Test } from '@vitest/runner';
import { inject, test, TestRunner, type TestContext } from 'vitest';
import type { ThreatModel } from '../engine/case-schema.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { runCase } from '../runner/run-case.js';
import { planTests, runtimeConfig, settleTestFromRecord, type CaseModuleData } from './case-tests.js';
import { PLAN_KEY, type RunPlan } from './run-plan.js';
import type { TestPlan } from './test-plan.js';
import { defineFixtureTests } from './fixture-tests.js';
import { installMatchers } from './matchers.js';
import type { VeraRuntimeConfig } from './options.js';
import { PROVIDE_KEY } from './provide-key.js';
import { runOptionsFor } from './run-options.js';
import { RunScheduler, type StartRun } from './run-scheduler.js';
import { testMeta, type VeraTestMeta } from './meta-from-record.js';

/**
 * The runtime a generated case module imports (`defineCaseTests`): one concurrent test per case,
 * threat model and repeat. By default (`schedule: 'prefetch'`) the runs are started ahead by a
 * scheduler shared by every file of the worker, and each test body awaits its own run; with
 * `schedule: 'fixtures'` each test builds its parts as `test.extend` fixtures (sandbox, gateway,
 * agent, control) inside its own body.
 */
declare module 'vitest' {
  interface ProvidedContext {
    [PROVIDE_KEY]: VeraRuntimeConfig;
  }
  interface TaskMeta {
    vera?: VeraTestMeta;
  }
}

export type ScheduledContext = Pick<TestContext, 'task' | 'annotate' | 'skip' | 'signal'>;

let scheduler: RunScheduler | undefined;

export function defineCaseTests(data: CaseModuleData) {
  installMatchers();
  const config = runtimeConfig();
  return config.options.schedule === 'fixtures' ? defineFixtureTests(data, config) : defineScheduledTests(data, config);
}

function runKey(file: string, testName: string): string {
  return `${file}\u0000${testName}`;
}

/**
 * One case run, as the scheduler starts it: its record is written the moment the run finishes, so
 * an interrupted test run (Ctrl-C while a later test waits) keeps the record of every run that
 * finished — not only of those whose test had already taken it.
 */
function startRun(config: VeraRuntimeConfig, spec: SafetyCase, file: string, plan: Pick<TestPlan, 'threatModel' | 'repeat' | 'seed'>): StartRun {
  return async (signal) => runCase(await runOptionsFor(config, spec, file, { threatModel: plan.threatModel, repeat: plan.repeat, seed: plan.seed, signal }));
}

/** The main process's plan of this test run (when one worker runs every case file): start it all. */
function adoptPlan(runs: RunScheduler, config: VeraRuntimeConfig): void {
  const plan = inject(PLAN_KEY as never) as RunPlan | undefined;
  if (!plan || plan.files.length === 0) return;
  runs.usePlan(
    plan.generation,
    plan.files.flatMap((f) => f.cases.flatMap((c) => c.tests.map((t) => ({ key: runKey(f.file, t.name), start: startRun(config, c.spec, f.file, t) })))),
  );
}

/** Tests whose runs the worker's scheduler starts ahead; the body awaits the run and judges it. */
function defineScheduledTests(data: CaseModuleData, config: VeraRuntimeConfig) {
  const { spec } = data;
  scheduler ??= new RunScheduler(config.options.concurrency);
  adoptPlan(scheduler, config);
  const runs = scheduler;
  const define = (threatModel: ThreatModel, fn: (ctx: ScheduledContext) => Promise<void>) => {
    for (const plan of planTests(data, config, threatModel)) {
      test(plan.name, plan.options, fn as never);
      const task = TestRunner.getCurrentSuite().tasks.at(-1) as Test;
      runs.register(task, runKey(data.file, plan.name), startRun(config, spec, data.file, plan));
    }
  };
  define.execute = async ({ task, annotate, skip, signal }: ScheduledContext): Promise<void> => {
    // The record was redacted and written when the run finished (startRun): every output shows it.
    const { record, recordFile } = await runs.take(task as Test, signal);
    task.meta.vera = testMeta(spec, record.threatModel, data.file, record, recordFile);
    await settleTestFromRecord(record, { annotate, skip }, data, config);
  };
  return define;
}

export type { CaseModuleData };
export { provideUserModules } from './user-modules.js';
