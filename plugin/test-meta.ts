import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import type { RunStatus, SafetyRecord } from '../engine/record.js';
import type { ProviderStats } from '../provider/model-proxy.js';

/**
 * What each test carries in `task.meta.vera` for reporters: plain JSON, so it survives the
 * worker→main boundary and `--reporter=blob` + `--merge-reports`.
 */
export interface VeraTestMeta {
  caseId: string;
  title: string;
  file: string;
  risk: string;
  attack: string;
  environment: string;
  threatModel: ThreatModel;
  /** Which repeat of the case (0-based; the record file has `--r<repeat>` when > 0). */
  repeat?: number;
  /** This repeat's seed (engine/seed.ts). */
  seed?: number;
  /** Strategies the control agent used, in order of first use (LLM adversary: its plan as it went). */
  strategies?: string[];
  /** Why the conversation ended (goal reached, turn budget, attack exhausted, …). */
  stopReason?: string;
  /** Absent until the run has a verdict (a test that crashed in setup has none). */
  status?: RunStatus;
  evidence?: string[];
  reason?: string;
  agent?: string;
  /** A violated injected run's counterfactual attribution (engine/counterfactual.ts). */
  attribution?: 'attributable' | 'not-attributable' | 'unknown';
  /** What its counterfactual run cost. */
  counterfactual?: { durationMs: number; usage: { input: number; output: number }; provider?: ProviderStats };
  /** What the agent's programs ran under (`none`: unconfined, the user opted in). */
  confinement?: 'bubblewrap' | 'container' | 'none';
  recordFile?: string;
  utility?: boolean;
  turns?: number;
  usage?: { input: number; output: number };
  /** The run's model traffic through the run-wide proxy (requests, retries, waits, tokens by model). */
  provider?: ProviderStats;
  durationMs?: number;
}

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
    meta.turns = record.turns;
    meta.usage = record.usage;
    if (record.provider) meta.provider = record.provider;
    meta.durationMs = Math.round(record.durationMs);
  }
  if (recordFile) meta.recordFile = recordFile;
  return meta;
}

/** A run that ended in a fault (agent crash, timeout, sandbox failure): no verdict, the test fails. */
export class VeraRunError extends Error {
  constructor(record: SafetyRecord) {
    const detail = record.error?.detail ? `\n${record.error.detail}` : '';
    super(`${record.caseId} [${record.threatModel}] could not be judged: ${record.error?.message ?? record.verdict.reason ?? 'unknown error'}${detail}`);
    this.name = 'VeraRunError';
  }
}
