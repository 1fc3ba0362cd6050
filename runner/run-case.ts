import type { AgentAdapter } from '../adapters/adapter.js';
import { benignUser } from '../control/benign-user.js';
import type { ControlAgent } from '../control/control.js';
import { scriptedAdversary } from '../control/scripted-adversary.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';
import { adversarialUser, type ThreatModel } from '../engine/case-helpers.js';
import type { SafetyCase } from '../engine/case-schema.js';
import type { CaseRunOptions } from './run-context.js';
import { prepareRun, type FinishedRun, type LiveStage } from './run-stages.js';
import { errorEntry } from '../engine/errors.js';
import { writeRedactedRecord, type SafetyRecord } from '../engine/record-writer.js';
import { casePublic, redactRecord } from '../engine/redact.js';
import { attributionOf, needsCounterfactual } from '../engine/counterfactual.js';

export interface RunCaseOptions extends CaseRunOptions {
  agent: AgentAdapter;
  /** Default: the in-process backend. */
  backend?: SandboxBackend;
  /** The adversary for single- and multi-channel runs (default: the scripted adversary). */
  adversary?: ControlAgent;
  /** The user for benign and indirect runs (default: the benign user). */
  user?: ControlAgent;
  /** Where records go (default `.vera/records`); `false` keeps them in memory only. */
  recordDir?: string | false;
  /**
   * Re-run a violated, injected run without the attack text to tell whether the injection caused
   * it (`record.attribution`; see counterfactual.ts). Default false here; the plugin turns it on for
   * local and scripted models.
   */
  counterfactual?: boolean;
}

export interface RunCaseResult {
  record: SafetyRecord;
  /** Path of the written record, when written. */
  recordFile?: string;
  /** Time spent writing the record (not inside the record: it is measured after the write). */
  recordWriteMs?: number;
}

/** The control agent a threat model calls for: an adversary when the user is hostile, else an honest user. */
export function controlFor(threatModel: ThreatModel, options: { adversary?: ControlAgent; user?: ControlAgent }): ControlAgent {
  return adversarialUser(threatModel) ? (options.adversary ?? scriptedAdversary()) : (options.user ?? benignUser());
}

/**
 * Runs one case under one threat model from start to record, without Vitest: sandbox → init →
 * gateway → agent → control loop → verdict → record. Faults become an `error` record; everything
 * started is torn down.
 */
export async function runCase(options: RunCaseOptions): Promise<RunCaseResult> {
  let record = await runOnce(options);
  if (options.counterfactual) record = await withCounterfactual(record, options);
  return finalizeRecord(record, { recordDir: options.recordDir, spec: options.spec });
}

/**
 * The record with its attribution when it needs one (engine/counterfactual.ts): the same run — same
 * repeat, seed and canaries, parts of its own — with every injection in identity mode, so the
 * attack text is gone. Shared by `runCase` and the plugin's fixture runs, which finish their own.
 */
export async function withCounterfactual(record: SafetyRecord, options: RunCaseOptions): Promise<SafetyRecord> {
  if (!needsCounterfactual(record)) return record;
  const counterfactual = await runOnce({
    ...options,
    repeat: record.repeat,
    seed: record.seed ?? 0,
    secrets: record.secrets,
    injectionMode: 'identity',
    recordDir: false,
  });
  return { ...record, attribution: attributionOf(counterfactual) };
}

/** The stages of one run, start to record, everything torn down. */
async function runOnce(options: RunCaseOptions): Promise<SafetyRecord> {
  const prepared = prepareRun({ ...options, agentId: options.agentId ?? options.agent.id });
  // Each stage gives the next; a fault ends the run at the stage it happened in (coded by it).
  let stage: LiveStage = prepared;
  let finished: FinishedRun;
  try {
    const sandboxed = await prepared.startSandbox(options.backend ?? new InProcessBackend());
    stage = sandboxed;
    const connected = await sandboxed.startGateway();
    stage = connected;
    const withAgent = await connected.startAgent(options.agent);
    stage = withAgent;
    const started = await withAgent.startControl(controlFor(options.threatModel, options));
    stage = started;
    finished = await started.drive();
  } catch (error) {
    finished = stage.end(error);
  }
  const { record } = await finished.judge();
  // The record is what was judged; a teardown fault is kept beside it, where no verdict reads it.
  return prepared.dispose().then(
    () => record,
    (error: unknown) => ({ ...record, teardown: teardownEntry(error) }),
  );
}

function teardownEntry(error: unknown): NonNullable<SafetyRecord['teardown']> {
  const entry = errorEntry(error, 'HARNESS_FAILED');
  return { kind: entry.kind, code: entry.code, message: `teardown failed: ${entry.message}` };
}

/**
 * The record as every output sees it — real-looking credentials redacted (the run's canaries and
 * the literals of the case's own checks kept), so the terminal, JUnit, the summaries and the reports never show what the file does not —
 * written to `recordDir` unless it is `false`.
 */
export async function finalizeRecord(record: SafetyRecord, options: { recordDir: string | false | undefined; spec: SafetyCase }): Promise<RunCaseResult> {
  const { recordDir } = options;
  const redacted = redactRecord(record, casePublic(options.spec));
  if (recordDir === false) return { record: redacted };
  const t = performance.now();
  const recordFile = await writeRedactedRecord(recordDir ?? '.vera/records', redacted);
  return { record: redacted, recordFile, recordWriteMs: performance.now() - t };
}

export type { SafetyCase };
