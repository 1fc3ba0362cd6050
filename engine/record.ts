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
  /**
   * What the agent's own programs ran under, when it started any (CLI agents): `bubblewrap`,
   * `container`, or `none` — an unconfined run the user opted into (the reports warn about it).
   */
  confinement?: 'bubblewrap' | 'container' | 'none';
  /**
   * For a violated run with injections: the same case, seed and canaries re-run with every
   * injection in `identity` mode (the attack text gone; a multi-channel adversary's messages
   * kept). `attributable`: that run was safe — the injected text caused the violation;
   * `not-attributable`: it violated too — the harm came from elsewhere; `unknown`: it could not
   * be judged (error, N/A).
   */
  attribution?: Attribution;
  /** Calls the gateway refused — past the tool-call budget, or after the run ended — when there were any. */
  gateway?: { calls: number; refused: number; refusedNotRecorded: number; late: number; lateNotRecorded: number };
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
  /**
   * Set when the record was cut to stay under the size cap (`MAX_RECORD_BYTES`): long tool
   * results and outputs shortened, and — if that was not enough — events from the middle of the
   * trajectory dropped. Re-verification of such a record may differ from the live verdict.
   */
  truncated?: { originalBytes: number; shortenedValues: number; droppedEvents: number };
}

export interface Attribution {
  verdict: 'attributable' | 'not-attributable' | 'unknown';
  counterfactual: {
    status: RunStatus;
    stopReason: string;
    /** The evidence that decided the counterfactual's verdict. */
    evidence: string[];
    turns: number;
    durationMs: number;
    usage: { input: number; output: number };
    /** Its model traffic through the run-wide proxy, when there was one (reports add it to the totals). */
    provider?: ProviderStats;
    error?: string;
  };
}

/** A record larger than this is cut before it is written (an agent in a loop must not fill the disk). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;
/** Strings of the trajectory longer than this are shortened first when a record is over the cap. */
const SHORTENED_STRING = 4096;

/** `record`, cut to `maxBytes` of JSON when it is larger (see `SafetyRecord.truncated`); the record itself when not. */
export function capRecordSize(record: SafetyRecord, text: string, maxBytes = MAX_RECORD_BYTES): { record: SafetyRecord; text: string } {
  if (text.length <= maxBytes) return { record, text };
  let shortenedValues = 0;
  const shorten = (value: unknown): unknown => {
    if (typeof value === 'string') {
      if (value.length <= SHORTENED_STRING) return value;
      shortenedValues++;
      return `${value.slice(0, SHORTENED_STRING)}…[truncated: ${value.length - SHORTENED_STRING} more characters]`;
    }
    if (Array.isArray(value)) return value.map(shorten);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]));
    return value;
  };
  let trajectory = record.trajectory.map((e) => shorten(e) as TrajectoryEvent);
  const cut: SafetyRecord = { ...record, trajectory, responses: record.responses.map((r) => shorten(r) as string), control_transcript: shorten(record.control_transcript) as ControlExchange[] };
  let out = JSON.stringify(cut);
  let droppedEvents = 0;
  // Still over: keep the start and the end of the trajectory (how it began, how it ended).
  while (out.length > maxBytes && trajectory.length > 20) {
    const keep = Math.floor(trajectory.length / 4);
    droppedEvents += trajectory.length - 2 * keep;
    trajectory = [...trajectory.slice(0, keep), ...trajectory.slice(-keep)];
    cut.trajectory = trajectory;
    out = JSON.stringify(cut);
  }
  cut.truncated = { originalBytes: text.length, shortenedValues, droppedEvents };
  return { record: cut, text: JSON.stringify(cut) };
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
  const redacted = redactRecord(record);
  const { text } = capRecordSize(redacted, JSON.stringify(redacted));
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
