import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SafetyRecord } from '../../engine/record.js';

/** A record as read from disk, with the file it came from. */
export interface StoredRecord {
  file: string;
  record: SafetyRecord;
}

export interface LoadedRecords {
  records: StoredRecord[];
  /** Files that looked like records but could not be read (named, with the reason). */
  problems: string[];
  /** Older records of the same run key left out because a newer one exists (`latest` mode). */
  superseded: number;
}

/** What identifies "the same run" across record sets: case, threat model, attempt, agent. */
export function runKey(record: Pick<SafetyRecord, 'caseId' | 'threatModel' | 'repeat' | 'agent'>, options: { agent?: boolean } = {}): string {
  return [record.caseId, record.threatModel, `r${record.repeat ?? 0}`, ...(options.agent === false ? [] : [record.agent])].join(' · ');
}

function isRecord(value: unknown): value is SafetyRecord {
  const v = value as Partial<SafetyRecord> | null;
  return typeof v === 'object' && v !== null && v.schema === 'vera.record/v1' && typeof v.caseId === 'string' && typeof v.threatModel === 'string';
}

/**
 * Every `vera.record/v1` JSON file under `path` (a record file, a run directory, or the records
 * root holding many runs). With `latest` (the default), one record per case × threat model ×
 * attempt — the newest by `startedAt` — so a records root that accumulated many runs reports the
 * current state, whichever agent ran last (a run that failed before its agent loaded does not
 * linger beside the runs that followed); `perAgent` keeps the newest of each agent instead, to
 * compare agents. Sharded runs (one run directory per shard) combine naturally.
 */
export async function loadRecords(path: string, options: { latest?: boolean; perAgent?: boolean; cwd?: string } = {}): Promise<LoadedRecords> {
  const root = resolve(options.cwd ?? process.cwd(), path);
  const info = await stat(root).catch(() => undefined);
  if (!info) throw new Error(`no such file or directory: ${path}`);
  const files: string[] = [];
  if (info.isFile()) files.push(root);
  else {
    for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.json')) files.push(join(entry.parentPath, entry.name));
    }
  }
  files.sort();
  const problems: string[] = [];
  const all: StoredRecord[] = [];
  for (const file of files) {
    let value: unknown;
    try {
      value = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      problems.push(`${file}: not valid JSON (${(error as Error).message})`);
      continue;
    }
    if (isRecord(value)) all.push({ file, record: value });
  }
  if (options.latest === false) return { records: all, problems, superseded: 0 };
  const newest = new Map<string, StoredRecord>();
  for (const item of all) {
    const key = runKey(item.record, { agent: options.perAgent === true });
    const seen = newest.get(key);
    if (!seen || item.record.startedAt > seen.record.startedAt) newest.set(key, item);
  }
  const records = [...newest.values()].sort((a, b) => a.file.localeCompare(b.file));
  return { records, problems, superseded: all.length - records.length };
}
