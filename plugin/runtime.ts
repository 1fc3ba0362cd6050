import { resolve } from 'node:path';
import { expect, inject, test, type TestContext } from 'vitest';
import type { AgentSession } from '../adapters/adapter.js';
import type { ControlSession } from '../control/control.js';
import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import { CaseRun } from '../engine/case-run.js';
import type { SafetyRecord } from '../engine/record.js';
import { controlFor, finalizeRecord } from '../engine/run-case.js';
import type { StartedMcpGateway } from '../sandbox/gateway/mcp-http-host.js';
import type { StartedSandbox } from '../sandbox/sandbox.js';
import { installMatchers } from './matchers.js';
import { PROVIDE_KEY, type VeraRuntimeConfig } from './options.js';
import { resolveAdversary, resolveAgent, resolveBackend, resolveUser } from './resolve-parts.js';
import { repeatSeed } from '../engine/seed.js';
import { VeraRunError, testMeta, type VeraTestMeta } from './test-meta.js';

/**
 * The runtime a generated case module imports (`defineCaseTests`). It builds the fixtures
 * — sandbox, gateway, agent, control — with `test.extend`, so each one is torn down after the
 * test whatever happened, and registers one concurrent test per threat model.
 */
declare module 'vitest' {
  interface ProvidedContext {
    [PROVIDE_KEY]: VeraRuntimeConfig;
  }
  interface TaskMeta {
    vera?: VeraTestMeta;
  }
}

export interface CaseModuleData {
  file: string;
  spec: SafetyCase;
  line: number;
  /** Where the verifier is in the YAML: a violation's stack points there. */
  verifier: { line: number; column: number };
}

interface CaseFixtures {
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

function recordDirOf(config: VeraRuntimeConfig): string | false {
  return config.options.recordDir === false ? false : resolve(config.root, config.options.recordDir);
}

export function defineCaseTests(data: CaseModuleData) {
  installMatchers();
  const config = inject(PROVIDE_KEY);
  if (!config) throw new Error('vera: no configuration was provided — is the vera() plugin in vitest.config?');
  const { spec } = data;
  const recordDir = recordDirOf(config);

  const caseTest = test.extend<CaseFixtures>({
    caseRun: async ({ task, signal }, use) => {
      const { threatModel, repeat = 0, seed } = task.meta.vera!;
      const run: CaseFixtures['caseRun'] = new CaseRun({
        spec,
        threatModel,
        caseFile: data.file,
        runId: config.runId,
        signal,
        repeat,
        ...(seed !== undefined ? { seed } : {}),
      });
      try {
        await use(run);
      } finally {
        // A fixture or the body failed before the verdict: keep an error record all the same.
        if (!run.recorded) {
          run.error ??= { kind: 'Interrupted', message: signal.aborted ? `test aborted: ${String(signal.reason)}` : 'the test ended before the run finished' };
          const record = await run.finish();
          task.meta.vera = testMeta(spec, threatModel, data.file, record);
          await finalizeRecord(record, recordDir).catch(() => {});
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
      const adapter = await stage(caseRun, () => resolveAgent(config.options.agent, config.root));
      const session = await stage(caseRun, () => caseRun.startAgent(adapter));
      await use(session);
      await session.close();
    },
    control: async ({ caseRun, agent }, use) => {
      void agent;
      const control = await stage(caseRun, () =>
        caseRun.startControl(
          controlFor(caseRun.threatModel, { adversary: resolveAdversary(config.options.adversary), user: resolveUser(config.options.user) }),
        ),
      );
      await use(control);
    },
  });

  const timeout = spec.budgets.seconds * 1000 + 30_000;
  // One test per (threat model, repeat): each repeat is its own judged run with its own record,
  // JUnit testcase and evidence, and a crash fails that repeat only. `r<k>` matches the record file.
  const repeats = spec.repeats ?? config.options.repeats;
  const define = (threatModel: ThreatModel, fn: (ctx: CaseFixtures & TestContext) => Promise<void>) => {
    if (config.options.threatModels && !config.options.threatModels.includes(threatModel)) return;
    const risk = spec.taxonomy.risk.split('/')[0]!;
    const tags = [`threat:${threatModel}`, ...(config.riskTags.includes(`risk:${risk}`) ? [`risk:${risk}`] : [])];
    for (let repeat = 0; repeat < repeats; repeat++) {
      const run = { repeat, seed: repeatSeed(config.options.seed, spec.id, repeat) };
      caseTest(
        `${spec.id} › [${threatModel}]${repeats > 1 ? ` r${repeat}` : ''}`,
        { concurrent: true, timeout, tags, meta: { vera: testMeta(spec, threatModel, data.file, undefined, undefined, run) } },
        fn as never,
      );
    }
  };

  define.execute = async ({ caseRun, task, annotate, skip }: ExecuteContext): Promise<void> => {
    try {
      await caseRun.drive();
    } catch (error) {
      caseRun.fail(error);
    }
    const record = await caseRun.finish();
    caseRun.recorded = true;
    const written = await finalizeRecord(record, recordDir);
    task.meta.vera = testMeta(spec, caseRun.threatModel, data.file, record, written.recordFile);
    await annotateRecord(annotate, record, repeats > 1);
    conclude(record, skip, data);
  };
  return define;
}

/** Annotations become JUnit `<property>` elements: the fields a CI dashboard groups by. */
async function annotateRecord(annotate: TestContext['annotate'], record: SafetyRecord, repeated = false): Promise<void> {
  await Promise.all([
    ...(repeated ? [annotate(String(record.repeat), 'vera.repeat'), annotate(String(record.seed ?? ''), 'vera.seed')] : []),
    annotate(record.taxonomy.risk, 'vera.risk'),
    annotate(record.taxonomy.attack, 'vera.attack'),
    annotate(record.taxonomy.environment, 'vera.environment'),
    annotate(record.threatModel, 'vera.threat-model'),
    annotate(record.status, 'vera.verdict'),
  ]);
}

function conclude(record: SafetyRecord, skip: TestContext['skip'], data: CaseModuleData): void {
  if (record.status === 'not-applicable') skip(`N/A: ${record.verdict.reason ?? 'the attack never reached the agent'}`);
  if (record.status === 'error') throw new VeraRunError(record);
  try {
    expect(record).toBeSafe();
  } catch (error) {
    // The stack points at the verifier in the YAML, so the code frame shows what was violated.
    const e = error as Error;
    e.stack = `${e.name}: ${e.message}\n    at verifier (${data.file}:${data.verifier.line}:${data.verifier.column})`;
    throw e;
  }
}
