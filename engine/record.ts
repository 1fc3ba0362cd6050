import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlExchange } from '../control/control.js';
import type { StrategyPlan } from '../control/strategies.js';
import type { SafetyCase, ThreatModel } from './case-schema.js';
import type { JsonObject } from './json.js';
import { redactRecord } from './redact.js';
import type { ProviderStats } from '../provider/model-proxy.js';
import type { TrajectoryEvent } from './trajectory.js';
import type { Evidence } from './verifier.js';

export type RunStatus = 'violated' | 'safe' | 'not-applicable' | 'error';

export interface Verdict {
  status: RunStatus;
  /** Why the verifier held or not; for N/A and errors, why there is no verdict. */
  evidence: Evidence[];
  reason?: string;
}

export interface PhaseTimings {
  sandboxMs: number;
  initMs: number;
  gatewayMs: number;
  agentStartMs: number;
  controlMs: number;
  agentMs: number;
  /** Part of `agentMs` spent waiting for the model, when the adapter reports it. */
  modelMs: number;
  verifyMs: number;
}

/**
 * Everything about one case run, enough to re-verify and re-report without the agent:
 * the trajectory, both snapshots, the responses, the secrets drawn, and the verdict.
 */
export interface SafetyRecord {
  schema: 'vera.record/v1';
  runId: string;
  caseId: string;
  caseHash: string;
  caseFile?: string;
  title: string;
  goal: string;
  taxonomy: SafetyCase['taxonomy'];
  threatModel: ThreatModel;
  repeat: number;
  /** This run's seed (per repeat; see engine/seed.ts). Absent only in records written before seeds existed. */
  seed?: number;
  agent: string;
  control: string;
  backend: string;
  startedAt: string;
  durationMs: number;
  timings: PhaseTimings;
  status: RunStatus;
  verdict: Verdict;
  utility?: { holds: boolean; evidence: Evidence[] };
  error?: { kind: string; message: string; detail?: string };
  stopReason: string;
  turns: number;
  secrets: Record<string, string>;
  injections: { rules: string[]; fired: string[]; payloads: Record<string, string> };
  trajectory: TrajectoryEvent[];
  responses: string[];
  initialState: JsonObject;
  finalState: JsonObject;
  /** Tokens the run used: counted by the model proxy when there is one, else as the agent reported. */
  usage: { input: number; output: number };
  /** The run's model traffic through the run-wide proxy: requests, retries, rate limits, waits, tokens by model. */
  provider?: ProviderStats;
  /** Every control-agent decision: model requests and responses, strategy, switches, payload rewrites, stops. */
  control_transcript: ControlExchange[];
  /** The adversary's strategy plan (sequence, source, switching rule), when it had one. */
  controlPlan?: StrategyPlan;
  /** Credentials redacted before writing, by kind (engine/redact.ts); absent when none were found. */
  redactions?: Record<string, number>;
}

const hashes = new WeakMap<SafetyCase, string>();

/** Stable hash of a case's meaning (its parsed form), so a record of an edited case is flagged. */
export function caseHash(spec: SafetyCase): string {
  let hash = hashes.get(spec);
  if (!hash) {
    hash = createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 16);
    hashes.set(spec, hash);
  }
  return hash;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function newRunId(date = new Date()): string {
  return `${date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

export function recordFileName(record: Pick<SafetyRecord, 'caseId' | 'threatModel' | 'repeat'>): string {
  return `${record.caseId}--${record.threatModel}${record.repeat > 0 ? `--r${record.repeat}` : ''}.json`;
}

/** Run directories this process has made: one mkdir per run, not one per record. */
const madeDirs = new Set<string>();

/**
 * Writes the record atomically (temp file + rename): a reader never sees half a record.
 * Real-looking credentials are redacted first; the run's canary secrets are kept.
 */
export async function writeRecord(dir: string, record: SafetyRecord): Promise<string> {
  const runDir = join(dir, record.runId);
  const file = join(runDir, recordFileName(record));
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const text = JSON.stringify(redactRecord(record));
  if (!madeDirs.has(runDir)) await mkdir(runDir, { recursive: true });
  try {
    await writeFile(temp, text);
  } catch (error) {
    // The directory went away since (someone cleaned up): make it again, once.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(runDir, { recursive: true });
    await writeFile(temp, text);
  }
  madeDirs.add(runDir);
  await rename(temp, file);
  return file;
}
