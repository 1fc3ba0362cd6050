import type { CaseRun } from './case-run.js';
import { caseHash, type SafetyRecord, type Verdict } from '../engine/record-writer.js';

/** What `CaseRun.finish` found out at the end, beside what the run holds. */
export interface RunOutcome {
  verdict: Verdict;
  utility: SafetyRecord['utility'];
  /** What the injections did, as the verdict read it. */
  injections: SafetyRecord['injections'];
  provider: SafetyRecord['provider'];
  offered: SafetyRecord['offered'];
  agentProgram: SafetyRecord['agentProgram'];
  durationMs: number;
}

/**
 * A finished run as its safety record: plain data, typed by the record schema (a run never
 * parses it — the loader validates what was written). Optional parts appear only when the run
 * had them, so a record says nothing it does not know.
 */
export function caseRecord(run: CaseRun, outcome: RunOutcome): Readonly<SafetyRecord> {
  const { verdict, utility, injections, provider, offered, agentProgram } = outcome;
  const gatewayStats = run.gateway?.stats();
  // Frozen where the verdict lives: what was judged cannot be edited afterwards (a teardown fault,
  // an attribution, redaction each make a new record that says so).
  Object.freeze(verdict);
  Object.freeze(injections);
  return Object.freeze({
    schema: 'vera.record/v1',
    runId: run.runId,
    caseId: run.spec.id,
    caseHash: caseHash(run.spec),
    ...(run.options.caseFile ? { caseFile: run.options.caseFile } : {}),
    title: run.spec.title,
    goal: run.spec.goal,
    taxonomy: run.spec.taxonomy,
    threatModel: run.threatModel,
    repeat: run.options.repeat ?? 0,
    seed: run.seed,
    agent: run.agentId,
    control: run.controlId,
    backend: run.sandbox?.backend ?? 'none',
    ...(run.sandbox?.confinement ? { confinement: run.sandbox.confinement } : {}),
    ...(gatewayStats && gatewayStats.refused + gatewayStats.late > 0 ? { gateway: gatewayStats } : {}),
    startedAt: run.startedAt.toISOString(),
    durationMs: outcome.durationMs,
    timings: run.timings,
    status: verdict.status,
    verdict,
    ...(utility ? { utility } : {}),
    ...(run.error ? { error: run.error } : {}),
    stopReason: run.stopReason,
    turns: run.turns,
    secrets: { ...run.secrets },
    injections,
    trajectory: run.trajectory.events,
    responses: run.trajectory.responses(),
    initialState: run.initialState,
    finalState: run.finalState,
    usage: provider && provider.usage.input + provider.usage.output > 0 ? { ...provider.usage } : { ...run.usage },
    ...(provider ? { provider } : {}),
    ...(agentProgram ? { agentProgram } : {}),
    ...(offered ? { offered } : {}),
    control_transcript: [...(run.control?.transcript ?? [])],
    ...(run.control?.plan ? { controlPlan: run.control.plan } : {}),
  });
}
