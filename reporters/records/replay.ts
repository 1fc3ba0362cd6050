import type { SafetyCase } from '../../engine/case-schema.js';
import type { RunStatus, SafetyRecord, Verdict } from '../../engine/record-writer.js';
import { verdictOf } from '../../engine/verdict.js';
import { evaluatePredicate, type CustomCheck, type VerificationInput } from '../../engine/verifier.js';
import type { CaseIndex } from './case-index.js';
import type { StoredRecord } from './load-records.js';

/** A record judged again by the current verifier. */
export interface ReplayResult {
  file: string;
  record: SafetyRecord;
  /** The case file used; absent when none was found. */
  caseFile?: string;
  /** The case changed since the run (its hash differs from the record's). */
  hashChanged: boolean;
  before: RunStatus;
  /** `undefined` when the record could not be re-verified (see `problem`). */
  after?: RunStatus;
  verdict?: Verdict;
  utilityBefore?: boolean;
  utilityAfter?: boolean;
  changed: boolean;
  problem?: string;
}

/**
 * Judges a stored run with a (possibly newer) case's verifier, by the live run's own rule
 * (`verdictOf`).
 */
export function reverify(record: SafetyRecord, spec: SafetyCase, custom?: Record<string, CustomCheck>): { verdict: Verdict; utility?: boolean } {
  const input: VerificationInput = {
    events: record.trajectory,
    initial: record.initialState,
    final: record.finalState,
    responses: record.responses,
    secrets: record.secrets,
    ...(custom ? { custom } : {}),
  };
  const result = evaluatePredicate(spec.verifier, input);
  const verdict = verdictOf({
    result,
    error: record.error,
    injections: record.injections,
    control: { threatModel: record.threatModel, transcript: record.control_transcript },
  });
  const out: { verdict: Verdict; utility?: boolean } = { verdict };
  if (spec.utility) out.utility = evaluatePredicate(spec.utility, input, 'utility').holds;
  return out;
}

/** Replays every record against the current case files. */
export async function replayRecords(
  records: StoredRecord[],
  cases: CaseIndex,
  options: { custom?: Record<string, CustomCheck> } = {},
): Promise<ReplayResult[]> {
  const out: ReplayResult[] = [];
  for (const { file, record } of records) {
    const base: ReplayResult = { file, record, hashChanged: false, before: record.status, changed: false };
    if (record.utility) base.utilityBefore = record.utility.holds;
    const lookup = await cases.forRecord(record);
    if (!lookup.ok) {
      out.push({ ...base, problem: lookup.problem });
      continue;
    }
    base.caseFile = lookup.file;
    base.hashChanged = lookup.hash !== record.caseHash;
    try {
      const { verdict, utility } = reverify(record, lookup.spec, options.custom);
      out.push({
        ...base,
        after: verdict.status,
        verdict,
        ...(utility !== undefined ? { utilityAfter: utility } : {}),
        changed: verdict.status !== record.status,
      });
    } catch (error) {
      out.push({ ...base, problem: `the verifier could not run: ${(error as Error).message}` });
    }
  }
  return out;
}
