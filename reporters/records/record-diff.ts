import type { RunStatus, SafetyRecord } from '../../engine/record-writer.js';
import { runKey, type StoredRecord } from './load-records.js';

export interface RunChange {
  key: string;
  caseId: string;
  threatModel: string;
  repeat: number;
  before?: RunStatus;
  after?: RunStatus;
  /** The case itself changed between the two runs (its hash differs). */
  caseEdited: boolean;
  /** The deciding evidence of the after run (or, for runs that became safe, of the before run). */
  evidence?: string;
  beforeFile?: string;
  afterFile?: string;
}

export interface RecordSetDiff {
  /** Became violated (was safe, N/A or an error): regressions. */
  becameUnsafe: RunChange[];
  /** Was violated, now safe. */
  becameSafe: RunChange[];
  /** Other status changes: into or out of N/A or error (e.g. safe → N/A, error → safe, violated → error). */
  otherChanges: RunChange[];
  /** Runs only in the after set (new violations among them are listed in `newViolations`). */
  added: RunChange[];
  removed: RunChange[];
  newViolations: RunChange[];
  unchanged: number;
}

function firstEvidence(record: SafetyRecord | undefined): string | undefined {
  if (!record) return undefined;
  const deciding = record.verdict.evidence.filter((e) => e.holds === (record.status === 'violated'));
  const e = deciding[0] ?? record.verdict.evidence[0];
  return e ? `${e.at}: ${e.message}` : record.verdict.reason;
}

/**
 * Compares two record sets run by run. Runs are matched by case, threat model and attempt (not
 * agent: comparing two agents or two versions of one is the point).
 */
export function diffRecordSets(before: StoredRecord[], after: StoredRecord[]): RecordSetDiff {
  const key = (r: SafetyRecord) => runKey(r, { agent: false });
  const index = (set: StoredRecord[]) => {
    const map = new Map<string, StoredRecord>();
    for (const item of set) {
      const k = key(item.record);
      const seen = map.get(k);
      if (!seen || item.record.startedAt > seen.record.startedAt) map.set(k, item);
    }
    return map;
  };
  const a = index(before);
  const b = index(after);
  const diff: RecordSetDiff = { becameUnsafe: [], becameSafe: [], otherChanges: [], added: [], removed: [], newViolations: [], unchanged: 0 };
  const change = (k: string, x: StoredRecord | undefined, y: StoredRecord | undefined): RunChange => {
    const r = (y ?? x)!.record;
    const c: RunChange = {
      key: k,
      caseId: r.caseId,
      threatModel: r.threatModel,
      repeat: r.repeat ?? 0,
      caseEdited: Boolean(x && y && x.record.caseHash !== y.record.caseHash),
    };
    if (x) {
      c.before = x.record.status;
      c.beforeFile = x.file;
    }
    if (y) {
      c.after = y.record.status;
      c.afterFile = y.file;
    }
    const ev =
      y?.record.status === 'violated' || !y
        ? firstEvidence(y?.record ?? x?.record)
        : x?.record.status === 'violated'
          ? firstEvidence(x.record)
          : firstEvidence(y.record);
    if (ev) c.evidence = ev;
    return c;
  };
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  for (const k of keys) {
    const x = a.get(k);
    const y = b.get(k);
    if (!x) {
      const c = change(k, undefined, y);
      diff.added.push(c);
      if (c.after === 'violated') diff.newViolations.push(c);
      continue;
    }
    if (!y) {
      diff.removed.push(change(k, x, undefined));
      continue;
    }
    const from = x.record.status;
    const to = y.record.status;
    if (from === to) {
      diff.unchanged++;
      continue;
    }
    const c = change(k, x, y);
    if (to === 'violated') diff.becameUnsafe.push(c);
    else if (from === 'violated' && to === 'safe') diff.becameSafe.push(c);
    else diff.otherChanges.push(c);
  }
  return diff;
}
