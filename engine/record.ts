import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SafetyCase } from './case-schema.js';
import { redactRecord } from './redact.js';
import type { SafetyRecord } from './record-schema.js';
import type { TrajectoryEvent } from './trajectory.js';

// The record's types are inferred from its schema (record-schema.ts); they are re-exported here,
// where the writer and the rest of the project have always found them. Type-only: a run never
// loads the schemas, it only writes what they describe.
export type { Attribution, PhaseTimings, RunStatus, SafetyRecord, Verdict } from './record-schema.js';

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
  const cut: SafetyRecord = { ...record, trajectory, responses: record.responses.map((r) => shorten(r) as string), control_transcript: shorten(record.control_transcript) as SafetyRecord['control_transcript'] };
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
export function writeRecord(dir: string, record: SafetyRecord): Promise<string> {
  return writeRedactedRecord(dir, redactRecord(record));
}

/**
 * `writeRecord` for a record already redacted (the run's finished record is: every output shows
 * it), so a run's record is walked for credentials once, not twice.
 */
export async function writeRedactedRecord(dir: string, redacted: SafetyRecord): Promise<string> {
  const runDir = join(dir, redacted.runId);
  const file = join(runDir, recordFileName(redacted));
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
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
