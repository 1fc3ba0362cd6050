import { readdir, readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { SafetyRecord } from '../../engine/record-writer.js';
import { parseRecord } from '../../engine/record-reader.js';

/** A record as read from disk, with the file it came from. */
export interface StoredRecord {
  file: string;
  record: SafetyRecord;
}

export interface LoadedRecords {
  records: StoredRecord[];
  /** Files that looked like records but could not be read or did not validate (named, with the field and the reason). */
  problems: string[];
  /** Older records of the same run key left out because a newer one exists (`latest` mode). */
  superseded: number;
}

/** What identifies "the same run" across record sets: case, threat model, attempt, agent. */
export function runKey(record: Pick<SafetyRecord, 'caseId' | 'threatModel' | 'repeat' | 'agent'>, options: { agent?: boolean } = {}): string {
  return [record.caseId, record.threatModel, `r${record.repeat ?? 0}`, ...(options.agent === false ? [] : [record.agent])].join(' · ');
}

/**
 * Every Vera record (JSON file) under `path` — a record file, a run directory, or the records
 * root holding many runs — upgraded from older versions and validated against the record schema
 * (`parseRecord`): one that does not validate is a problem naming its file and field, and the
 * others still load. With `latest` (the default), one record per agent × case × threat model ×
 * attempt — the newest by `startedAt` — so a records root that accumulated many runs reports the
 * current state of every agent that ran there, side by side. A run whose agent never started
 * (`AGENT_START_FAILED`: its module did not load) is no agent's result: any newer run of the case
 * supersedes it, whichever agent (the fixed module's id differs from the broken one's). `perAgent:
 * false` keeps only the newest run of each case, whoever ran it. Sharded runs (one run directory
 * per shard) combine naturally.
 */
export async function loadRecords(path: string, options: { latest?: boolean; perAgent?: boolean; cwd?: string } = {}): Promise<LoadedRecords> {
  const cwd = options.cwd ?? process.cwd();
  const root = resolve(cwd, path);
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
  // Named as the user would type it: relative to the working directory when the file is under it.
  const shown = (file: string) => {
    const rel = relative(cwd, file);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
  };
  for (const file of files) {
    let value: unknown;
    try {
      value = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      problems.push(`${shown(file)}: not valid JSON (${(error as Error).message})`);
      continue;
    }
    const parsed = parseRecord(value);
    if (parsed.kind === 'record') all.push({ file, record: parsed.record });
    else if (parsed.kind === 'problem') problems.push(`${shown(file)}: ${parsed.problem}`);
  }
  if (options.latest === false) return { records: all, problems, superseded: 0 };
  const perAgent = options.perAgent !== false;
  const newest = new Map<string, StoredRecord>();
  for (const item of all) {
    const key = runKey(item.record, { agent: perAgent });
    const seen = newest.get(key);
    if (!seen || item.record.startedAt > seen.record.startedAt) newest.set(key, item);
  }
  // An agent that never started left no result of its own: a newer run of the case, by any agent, replaces it.
  const newestOfCase = new Map<string, string>();
  for (const { record } of newest.values()) {
    const key = runKey(record, { agent: false });
    if ((newestOfCase.get(key) ?? '') < record.startedAt) newestOfCase.set(key, record.startedAt);
  }
  const records = [...newest.values()]
    .filter(({ record }) => record.error?.code !== 'AGENT_START_FAILED' || newestOfCase.get(runKey(record, { agent: false })) === record.startedAt)
    .sort((a, b) => a.file.localeCompare(b.file));
  return { records, problems, superseded: all.length - records.length };
}
