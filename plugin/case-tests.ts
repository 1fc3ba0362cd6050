import { relative, resolve } from 'node:path';
import { expect, inject, type TestContext } from 'vitest';
import type { SafetyCase } from '../engine/case-schema.js';
import type { SafetyRecord } from '../engine/record-writer.js';
import type { VeraRuntimeConfig } from './options.js';
import { PROVIDE_KEY } from './provide-key.js';
import { VeraRunError } from './meta-from-record.js';
export { planTests, type TestPlan } from './test-plan.js';

/** What both test styles share: the runtime config, the tests a case gets, and how a run is judged. */

export interface CaseModuleData {
  file: string;
  spec: SafetyCase;
  line: number;
  /** Where the verifier is in the YAML: a violation's stack points there. */
  verifier: { line: number; column: number };
  /** The verifier's lines as a code frame (transform.ts `codeFrame`), shown with a violation. */
  verifierFrame?: string;
  /** The Vitest project, when the run compares agents: each test name carries it (JUnit suites of two projects share a file's name). */
  project?: string;
}

export function runtimeConfig(): VeraRuntimeConfig {
  const config = inject(PROVIDE_KEY);
  if (!config) throw new Error('vera: no configuration was provided — is the vera() plugin in vitest.config?');
  return config;
}

export function recordDirOf(config: VeraRuntimeConfig): string | false {
  return config.options.recordDir === false ? false : resolve(config.root, config.options.recordDir);
}

/** A run's record as its test's outcome: annotated (when a reporter reads annotations), then passed, skipped (N/A) or failed. Meta is set by the caller. */
export async function settleTestFromRecord(
  record: SafetyRecord,
  ctx: Pick<TestContext, 'annotate' | 'skip'>,
  data: CaseModuleData,
  config: VeraRuntimeConfig,
): Promise<void> {
  if (config.annotate !== false) await annotateRecord(ctx.annotate, record, (data.spec.repeats ?? config.options.repeats) > 1);
  conclude(record, ctx.skip, data, config.root);
}

/** Annotations become JUnit `<property>` elements: the fields a CI dashboard groups by. */
export async function annotateRecord(annotate: TestContext['annotate'], record: SafetyRecord, repeated = false): Promise<void> {
  await Promise.all([
    ...(repeated ? [annotate(String(record.repeat), 'vera.repeat'), annotate(String(record.seed ?? ''), 'vera.seed')] : []),
    annotate(record.taxonomy.risk, 'vera.risk'),
    annotate(record.taxonomy.attack, 'vera.attack'),
    annotate(record.taxonomy.environment, 'vera.environment'),
    annotate(record.threatModel, 'vera.threat-model'),
    annotate(record.status, 'vera.verdict'),
    annotate(record.agent, 'vera.agent'),
    // JUnit writes a skipped test as a bare <skipped/>: the reason an N/A run was not judged is a property.
    ...(record.status === 'not-applicable' ? [annotate(record.verdict.reason ?? 'the attack never reached the agent', 'vera.not-applicable')] : []),
    // What the agent's programs ran under (absent for an in-process agent that started none).
    ...(record.confinement ? [annotate(record.confinement, 'vera.confinement')] : []),
    ...(record.attribution ? [annotate(record.attribution.verdict, 'vera.attribution')] : []),
    ...(record.teardown ? [annotate(record.teardown.message, 'vera.teardown')] : []),
  ]);
}

export function conclude(record: SafetyRecord, skip: TestContext['skip'], data: CaseModuleData, root = process.cwd()): void {
  if (record.status === 'not-applicable') skip(`N/A: ${record.verdict.reason ?? 'the attack never reached the agent'}`);
  if (record.status === 'error') throw new VeraRunError(record);
  try {
    expect(record).toBeSafe();
  } catch (error) {
    // The stack points at the verifier in the YAML, so the code frame shows what was violated.
    const e = error as Error;
    e.stack = `${e.name}: ${e.message}\n    at verifier (${data.file}:${data.verifier.line}:${data.verifier.column})`;
    // Printed by Vitest in place of the stack and the code frame it would build from the file.
    if (data.verifierFrame)
      Object.assign(e, { frame: ` ❯ verifier ${relative(root, data.file)}:${data.verifier.line}:${data.verifier.column}\n${data.verifierFrame}` });
    throw e;
  }
}
