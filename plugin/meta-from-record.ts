import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import type { SafetyRecord } from '../engine/record-writer.js';
import type { VeraTestMeta } from '../engine/test-meta.js';
import { VeraError } from '../engine/errors.js';

export type { VeraTestMeta } from '../engine/test-meta.js';

export function testMeta(
  spec: SafetyCase,
  threatModel: ThreatModel,
  file: string,
  record?: SafetyRecord,
  recordFile?: string,
  run?: { repeat: number; seed: number },
): VeraTestMeta {
  const meta: VeraTestMeta = {
    caseId: spec.id,
    title: spec.title,
    file,
    risk: spec.taxonomy.risk,
    attack: spec.taxonomy.attack,
    environment: spec.taxonomy.environment,
    threatModel,
  };
  const repeat = record?.repeat ?? run?.repeat;
  const seed = record?.seed ?? run?.seed;
  if (repeat !== undefined) meta.repeat = repeat;
  if (seed !== undefined) meta.seed = seed;
  if (record) {
    const used = [...new Set(record.control_transcript.flatMap((e) => (e.decision.action === 'send' && e.strategy ? [e.strategy] : [])))];
    if (used.length > 0) meta.strategies = used;
    meta.stopReason = record.stopReason;
    meta.status = record.status;
    meta.evidence = record.verdict.evidence.filter((e) => e.holds === (record.status === 'violated')).map((e) => `${e.at}: ${e.message}`);
    if (record.verdict.reason) meta.reason = record.verdict.reason;
    meta.agent = record.agent;
    if (record.confinement) meta.confinement = record.confinement;
    if (record.attribution) {
      meta.attribution = record.attribution.verdict;
      const cf = record.attribution.counterfactual;
      meta.counterfactual = { durationMs: Math.round(cf.durationMs), usage: cf.usage, ...(cf.provider ? { provider: cf.provider } : {}) };
    }
    if (record.utility) meta.utility = record.utility.holds;
    if (record.teardown) meta.teardown = record.teardown.message;
    meta.turns = record.turns;
    meta.usage = record.usage;
    if (record.provider) meta.provider = record.provider;
    meta.durationMs = Math.round(record.durationMs);
  }
  if (recordFile) meta.recordFile = recordFile;
  return meta;
}

/** A run that ended in a fault (agent crash, timeout, sandbox failure): no verdict, the test fails. */
export class VeraRunError extends VeraError {
  constructor(record: SafetyRecord) {
    const detail = record.error?.detail ? `\n${record.error.detail}` : '';
    const where = record.error?.turn !== undefined ? ` (the agent failed in turn ${record.error.turn})` : '';
    super(
      'RUN_NOT_JUDGED',
      `${record.caseId} [${record.threatModel}] could not be judged${where}: ${record.error?.message ?? record.verdict.reason ?? 'unknown error'}${detail}`,
    );
    this.name = 'VeraRunError';
    // The user's own code threw: the test shows where (its frames, not Vera's).
    if (record.error?.stack) this.stack = `${this.name}: ${this.message}\n${record.error.stack}`;
  }
}
