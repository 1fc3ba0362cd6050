import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SafetyCase } from './case-schema.js';
import { redactRecord } from './redact.js';
import type { SafetyRecord } from './record-schema.js';
import { capRecordSize } from './record-size.js';

// The record's types are inferred from its schema (record-schema.ts); they are re-exported here,
// where the writer and the rest of the project have always found them. Type-only: a run never
// loads the schemas, it only writes what they describe.
export type { Attribution, PhaseTimings, RunStatus, SafetyRecord, Verdict } from './record-schema.js';

export { MAX_RECORD_BYTES, capRecordSize } from './record-size.js';

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
  return `${date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
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
  const { text } = capRecordSize(redacted);
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
