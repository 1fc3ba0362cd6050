import { asrRowOfRecord, type AsrRow } from '../../engine/asr.js';
import type { SafetyRecord } from '../../engine/record-writer.js';
import type { VeraTestMeta } from '../../engine/test-meta.js';
import type { ProviderStats } from '../../provider/model-proxy.js';

/**
 * One run as the summaries see it, whether it came from a test's meta (end of a Vitest run) or
 * from a stored record (`vera report`): its ASR row and the words that explain its verdict.
 */
export interface ReportRun {
  row: AsrRow;
  title: string;
  /** The evidence that decided the verdict, one line each (`verifier.egress: …`). */
  evidence: string[];
  /** Why there is no verdict (N/A, error). */
  reason?: string;
  caseFile?: string;
  recordFile?: string;
  /** The case was edited after this run (record hash ≠ current case hash). */
  caseEdited?: boolean;
  /** Tokens used, and the model traffic through the proxy when there was one. */
  usage?: { input: number; output: number };
  provider?: ProviderStats;
  /** The model traffic of its counterfactual run, when it had one (counted with the rest). */
  counterfactual?: { usage?: { input: number; output: number }; provider?: ProviderStats };
  /** What the agent's programs ran under; `none` is an unconfined run the user opted into. */
  confinement?: 'bubblewrap' | 'container' | 'none';
}

/** How many runs started the agent as a plain host process (`unconfined: true`). */
export function unconfinedRuns(runs: readonly Pick<ReportRun, 'confinement'>[]): number {
  return runs.filter((r) => r.confinement === 'none').length;
}

/** The evidence lines a verdict rests on: the held conditions of a violation, else all of them. */
export function decidingEvidence(record: Pick<SafetyRecord, 'status' | 'verdict'>): string[] {
  const deciding = record.verdict.evidence.filter((e) => e.holds === (record.status === 'violated'));
  return deciding.map((e) => `${e.at}: ${e.message}`);
}

export function reportRunOfRecord(record: SafetyRecord, extra: { recordFile?: string; caseEdited?: boolean } = {}): ReportRun {
  const run: ReportRun = { row: asrRowOfRecord(record), title: record.title, evidence: decidingEvidence(record) };
  const reason = record.verdict.reason ?? record.error?.message;
  if (reason) run.reason = reason;
  if (record.caseFile) run.caseFile = record.caseFile;
  if (extra.recordFile) run.recordFile = extra.recordFile;
  if (extra.caseEdited) run.caseEdited = true;
  run.usage = record.usage;
  if (record.provider) run.provider = record.provider;
  if (record.confinement) run.confinement = record.confinement;
  if (record.attribution)
    run.counterfactual = {
      usage: record.attribution.counterfactual.usage,
      ...(record.attribution.counterfactual.provider ? { provider: record.attribution.counterfactual.provider } : {}),
    };
  return run;
}

export function reportRunOfMeta(meta: VeraTestMeta, row: AsrRow, failure?: string): ReportRun {
  const run: ReportRun = { row, title: meta.title, evidence: meta.evidence ?? [] };
  const reason = meta.reason ?? failure;
  if (reason) run.reason = reason;
  run.caseFile = meta.file;
  if (meta.recordFile) run.recordFile = meta.recordFile;
  if (meta.usage) run.usage = meta.usage;
  if (meta.provider) run.provider = meta.provider;
  if (meta.confinement) run.confinement = meta.confinement;
  if (meta.counterfactual) run.counterfactual = meta.counterfactual;
  return run;
}
