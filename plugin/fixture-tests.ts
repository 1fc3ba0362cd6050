import type { TestContext } from 'vitest';
import { test } from 'vitest';
import type { ThreatModel } from '../engine/case-schema.js';
import { VeraError } from '../engine/errors.js';
import {
  prepareRun,
  type AgentStartedRun,
  type ConnectedRun,
  type LiveStage,
  type PreparedRun,
  type SandboxedRun,
  type StartedRun,
} from '../runner/run-stages.js';
import { casePublic, redactRecord } from '../engine/redact.js';
import { controlFor, finalizeRecord, withCounterfactual } from '../runner/run-case.js';
import type { VeraRuntimeConfig } from './options.js';
import { agentForRun, resolveAdversary, resolveBackend, resolveUser } from './resolve-parts.js';
import { planTests, recordDirOf, settleTestFromRecord, type CaseModuleData } from './case-tests.js';
import { testMeta } from './meta-from-record.js';
import { caseRunOptionsFor, runOptionsFor } from './run-options.js';

/**
 * `schedule: 'fixtures'`: each test builds its run as `test.extend` fixtures, one stage each —
 * sandbox, gateway, agent, control — inside its own body. The run fixture owns them all: after the
 * test it judges the run where it stands when no verdict was reached (a fixture failed, the test
 * was cancelled), then releases every part. Concurrency is Vitest's: tests within a file, files
 * across workers.
 */
export interface CaseFixtures {
  caseRun: PreparedRun;
  sandbox: SandboxedRun;
  gateway: ConnectedRun;
  agent: AgentStartedRun;
  control: StartedRun;
}

type ExecuteContext = Pick<CaseFixtures, 'control' | 'caseRun'> & Pick<TestContext, 'task' | 'annotate' | 'skip'>;

export function defineFixtureTests(data: CaseModuleData, config: VeraRuntimeConfig) {
  const { spec } = data;
  const recordDir = recordDirOf(config);

  const caseTest = test.extend<CaseFixtures>({
    caseRun: async ({ task, signal }, use) => {
      const { threatModel, repeat = 0, seed } = task.meta.vera!;
      const run = prepareRun({
        ...caseRunOptionsFor(config, spec, data.file, { threatModel, repeat, seed, signal }),
        agentId: (await agentForRun(config.options.agent, config.root)).id,
      });
      try {
        await use(run);
      } finally {
        // A fixture or the body failed before the verdict: keep an error record all the same.
        if (!run.judged) {
          const reason = new VeraError(
            signal.aborted ? 'RUN_ABORTED' : 'RUN_INTERRUPTED',
            signal.aborted ? `test aborted: ${String(signal.reason)}` : 'the test ended before the run finished',
          );
          const { record: judged } = await run.judgedOrEnded(reason);
          const written: { record: typeof judged; recordFile?: string } = await finalizeRecord(judged, { recordDir, spec }).catch(() => ({
            record: redactRecord(judged, casePublic(spec)),
          }));
          task.meta.vera = testMeta(spec, threatModel, data.file, written.record, written.recordFile);
        }
        await run.dispose();
      }
    },
    sandbox: async ({ caseRun }, use) => {
      await use(await startOrEnd(caseRun, async () => caseRun.startSandbox(await resolveBackend(config))));
    },
    gateway: async ({ sandbox }, use) => {
      await use(await startOrEnd(sandbox, () => sandbox.startGateway()));
    },
    agent: async ({ gateway }, use) => {
      await use(await startOrEnd(gateway, async () => gateway.startAgent(await agentForRun(config.options.agent, config.root))));
    },
    control: async ({ agent }, use) => {
      await use(
        await startOrEnd(agent, async () =>
          agent.startControl(
            controlFor(agent.threatModel, { adversary: await resolveAdversary(config.options.adversary), user: await resolveUser(config.options.user) }),
          ),
        ),
      );
    },
  });

  const define = (threatModel: ThreatModel, fn: (ctx: CaseFixtures & TestContext) => Promise<void>) => {
    for (const plan of planTests(data, config, threatModel)) caseTest(plan.name, plan.options, fn as never);
  };

  define.execute = async ({ control, task, annotate, skip }: ExecuteContext): Promise<void> => {
    const { record: finished } = await (await control.drive()).judge();
    // Its counterfactual, when it needs one, with parts of its own (runner/run-case.ts).
    const attributed = config.counterfactual
      ? await withCounterfactual(
          finished,
          await runOptionsFor(config, spec, data.file, { threatModel: control.threatModel, repeat: finished.repeat, seed: finished.seed }),
        )
      : finished;
    // The redacted record is the one every output shows (terminal, JUnit, summaries).
    const { record, recordFile } = await finalizeRecord(attributed, { recordDir, spec });
    task.meta.vera = testMeta(spec, control.threatModel, data.file, record, recordFile);
    await settleTestFromRecord(record, { annotate, skip }, data, config);
  };
  return define;
}

/**
 * Starts a fixture's stage; a failure ends the run at the stage before (so its record, judged by
 * the run fixture after the test, says why, coded by that stage) and fails the test.
 */
async function startOrEnd<T>(from: LiveStage, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    from.end(error);
    throw error;
  }
}
