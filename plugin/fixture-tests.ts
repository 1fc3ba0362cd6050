import type { TestContext } from 'vitest';
import { test } from 'vitest';
import type { AgentSession } from '../adapters/adapter.js';
import type { ControlSession } from '../control/control.js';
import type { ThreatModel } from '../engine/case-schema.js';
import { CaseRun } from '../runner/case-run.js';
import { casePublic, redactRecord } from '../engine/redact.js';
import { controlFor, finalizeRecord, withCounterfactual } from '../runner/run-case.js';
import type { StartedMcpGateway } from '../sandbox/gateway/mcp-http-host.js';
import type { StartedSandbox } from '../sandbox/sandbox.js';
import type { VeraRuntimeConfig } from './options.js';
import { agentForRun, resolveAdversary, resolveBackend, resolveUser } from './resolve-parts.js';
import { planTests, recordDirOf, settleTestFromRecord, type CaseModuleData } from './case-tests.js';
import { testMeta } from './meta-from-record.js';
import { caseRunOptionsFor, runOptionsFor } from './run-options.js';

/**
 * `schedule: 'fixtures'`: each test builds its parts as `test.extend` fixtures — sandbox,
 * gateway, agent, control — inside its own body, and Vitest tears each down after the test,
 * whatever happened. Concurrency is then Vitest's: tests within a file, files across workers.
 */
export interface CaseFixtures {
  caseRun: CaseRun & { recorded?: boolean };
  sandbox: StartedSandbox;
  gateway: StartedMcpGateway;
  agent: AgentSession;
  control: ControlSession;
}

type ExecuteContext = Pick<CaseFixtures, 'control' | 'caseRun'> & Pick<TestContext, 'task' | 'annotate' | 'skip'>;

/** Runs a fixture stage; a failure is recorded on the run (so its record says why) and rethrown. */
async function stage<T>(run: CaseRun, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    run.fail(error);
    throw error;
  }
}

export function defineFixtureTests(data: CaseModuleData, config: VeraRuntimeConfig) {
  const { spec } = data;
  const recordDir = recordDirOf(config);

  const caseTest = test.extend<CaseFixtures>({
    caseRun: async ({ task, signal }, use) => {
      const { threatModel, repeat = 0, seed } = task.meta.vera!;
      const run: CaseFixtures['caseRun'] = new CaseRun({
        ...caseRunOptionsFor(config, spec, data.file, { threatModel, repeat, seed, signal }),
        agentId: (await agentForRun(config.options.agent, config.root)).id,
      });
      try {
        await use(run);
      } finally {
        // A fixture or the body failed before the verdict: keep an error record all the same.
        if (!run.recorded) {
          run.error ??= { kind: 'Interrupted', message: signal.aborted ? `test aborted: ${String(signal.reason)}` : 'the test ended before the run finished' };
          const finished = await run.finish();
          const written: { record: typeof finished; recordFile?: string } = await finalizeRecord(finished, { recordDir, spec }).catch(() => ({
            record: redactRecord(finished, casePublic(spec)),
          }));
          task.meta.vera = testMeta(spec, threatModel, data.file, written.record, written.recordFile);
        }
        await run.dispose();
      }
    },
    sandbox: async ({ caseRun }, use) => {
      const sandbox = await stage(caseRun, async () => caseRun.startSandbox(await resolveBackend(config)));
      await use(sandbox);
      await sandbox.stop();
    },
    gateway: async ({ caseRun, sandbox }, use) => {
      void sandbox;
      const gateway = await stage(caseRun, () => caseRun.startGateway());
      await use(gateway);
      await gateway.stop();
    },
    agent: async ({ caseRun, gateway }, use) => {
      void gateway;
      const adapter = await stage(caseRun, () => agentForRun(config.options.agent, config.root));
      const session = await stage(caseRun, () => caseRun.startAgent(adapter));
      await use(session);
      await session.close();
    },
    control: async ({ caseRun, agent }, use) => {
      void agent;
      const control = await stage(caseRun, async () =>
        caseRun.startControl(
          controlFor(caseRun.threatModel, { adversary: await resolveAdversary(config.options.adversary), user: await resolveUser(config.options.user) }),
        ),
      );
      await use(control);
    },
  });

  const define = (threatModel: ThreatModel, fn: (ctx: CaseFixtures & TestContext) => Promise<void>) => {
    for (const plan of planTests(data, config, threatModel)) caseTest(plan.name, plan.options, fn as never);
  };

  define.execute = async ({ caseRun, task, annotate, skip }: ExecuteContext): Promise<void> => {
    try {
      await caseRun.drive();
    } catch (error) {
      caseRun.fail(error);
    }
    caseRun.recorded = true;
    const finished = await caseRun.finish();
    // Its counterfactual, when it needs one, with parts of its own (runner/run-case.ts).
    const attributed = config.counterfactual
      ? await withCounterfactual(
          finished,
          await runOptionsFor(config, spec, data.file, { threatModel: caseRun.threatModel, repeat: finished.repeat, seed: finished.seed }),
        )
      : finished;
    // The redacted record is the one every output shows (terminal, JUnit, summaries).
    const { record, recordFile } = await finalizeRecord(attributed, { recordDir, spec });
    task.meta.vera = testMeta(spec, caseRun.threatModel, data.file, record, recordFile);
    await settleTestFromRecord(record, { annotate, skip }, data, config);
  };
  return define;
}
