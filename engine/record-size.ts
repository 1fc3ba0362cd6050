import { createHash } from 'node:crypto';
import { isPlainObject } from './json.js';
import type { SafetyRecord } from './record-schema.js';
import type { TrajectoryEvent } from './trajectory.js';

/**
 * A record is bounded as a whole, whatever the agent did: a hostile agent that writes 100 MB to
 * the workspace, or 300 MiB, must neither fill the disk nor erase its own evidence (a record too
 * large to stringify was never written at all). The verdict was decided on the full state before
 * any of this; what is cut is said in `truncated`.
 *
 * Order of cuts, until the record fits: snapshots over their budget become a bounded summary (the
 * same paths, long strings as their first bytes with their length and sha256, large collections as
 * their first items and a count); long strings of the trajectory, the replies and the control
 * transcript are shortened; events from the middle of the trajectory are dropped (its start and its
 * end stay). Sizes are estimated by walking the value — never by stringifying something that may be
 * larger than a string can be.
 */

/** A record larger than this is cut before it is written (an agent in a loop must not fill the disk). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;
/** Strings of the trajectory longer than this are shortened first when a record is over the cap. */
const SHORTENED_STRING = 4096;
/** Each snapshot's share of the cap once the record is over it. */
const SNAPSHOT_SHARE = 0.25;
/** In a bounded snapshot: strings keep this many characters, collections this many entries. */
const SUMMARY_STRING = 512;
const SUMMARY_ENTRIES = 200;

/** The JSON size of `value`, roughly (string lengths, keys, punctuation), stopping once it passes `stopAt`. */
export function estimateJsonSize(value: unknown, stopAt = Number.POSITIVE_INFINITY): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && size <= stopAt) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') size += 8;
    else if (v === null || v === undefined) size += 4;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        size += k.length + 4;
        stack.push(item);
      }
      size += 2;
    }
  }
  return size;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A snapshot within `budget`: the same shape and paths, with long strings replaced by their first
 * characters and `…[truncated: N characters, sha256 …]`, and large arrays and objects cut to their
 * first entries plus a `…` entry that counts the rest.
 */
export function boundSnapshot(value: unknown, budget: number): { value: unknown; cut: number } {
  let cut = 0;
  let stringLimit = SUMMARY_STRING * 8;
  let entryLimit = SUMMARY_ENTRIES * 8;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      if (v.length <= stringLimit) return v;
      cut++;
      return `${v.slice(0, stringLimit)}…[truncated: ${v.length} characters, sha256 ${digest(v)}]`;
    }
    if (depth > 64) {
      cut++;
      return '…[truncated: nested deeper than 64 levels]';
    }
    if (Array.isArray(v)) {
      const kept = v.slice(0, entryLimit).map((item) => walk(item, depth + 1));
      if (v.length > entryLimit) {
        cut++;
        kept.push(`…[truncated: ${v.length - entryLimit} more items of ${v.length}]`);
      }
      return kept;
    }
    if (isPlainObject(v)) {
      const entries = Object.entries(v);
      const out: Record<string, unknown> = {};
      for (const [k, item] of entries.slice(0, entryLimit)) out[k] = walk(item, depth + 1);
      if (entries.length > entryLimit) {
        cut++;
        out['…'] = `[truncated: ${entries.length - entryLimit} more entries of ${entries.length}]`;
      }
      return out;
    }
    return v;
  };
  let out = walk(value, 0);
  // Tighter and tighter until it fits (each step an eighth of the last).
  while (estimateJsonSize(out, budget) > budget && (stringLimit > 64 || entryLimit > 8)) {
    stringLimit = Math.max(64, Math.floor(stringLimit / 8));
    entryLimit = Math.max(8, Math.floor(entryLimit / 8));
    cut = 0;
    out = walk(value, 0);
  }
  return { value: out, cut };
}

function shortenStrings(value: unknown, counter: { n: number }): unknown {
  if (typeof value === 'string') {
    if (value.length <= SHORTENED_STRING) return value;
    counter.n++;
    return `${value.slice(0, SHORTENED_STRING)}…[truncated: ${value.length - SHORTENED_STRING} more characters]`;
  }
  if (Array.isArray(value)) return value.map((v) => shortenStrings(v, counter));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortenStrings(v, counter)]));
  return value;
}

/**
 * `record` within `maxBytes` of JSON, and its text; the record itself when it already fits. Never
 * stringifies a record that is over the cap before cutting it.
 */
export function capRecordSize(record: SafetyRecord, maxBytes = MAX_RECORD_BYTES): { record: SafetyRecord; text: string } {
  const estimate = estimateJsonSize(record, maxBytes * 2);
  if (estimate <= maxBytes) {
    const text = JSON.stringify(record);
    if (text.length <= maxBytes) return { record, text };
  }
  const originalBytes = estimateJsonSize(record);
  const cut: SafetyRecord = { ...record };
  let snapshots = 0;
  const snapshotBudget = Math.floor(maxBytes * SNAPSHOT_SHARE);
  for (const key of ['initialState', 'finalState'] as const) {
    if (estimateJsonSize(cut[key], snapshotBudget) > snapshotBudget) {
      const bounded = boundSnapshot(cut[key], snapshotBudget);
      cut[key] = bounded.value as SafetyRecord[typeof key];
      snapshots += bounded.cut;
    }
  }
  const counter = { n: 0 };
  let trajectory = record.trajectory.map((e) => shortenStrings(e, counter) as TrajectoryEvent);
  cut.trajectory = trajectory;
  cut.responses = record.responses.map((r) => shortenStrings(r, counter) as string);
  cut.control_transcript = shortenStrings(record.control_transcript, counter) as SafetyRecord['control_transcript'];
  // What else an agent can make large: its program's output, what its model was offered, rewritten payloads.
  if (record.agentProgram) cut.agentProgram = shortenStrings(record.agentProgram, counter) as SafetyRecord['agentProgram'];
  if (record.offered) cut.offered = shortenStrings(record.offered, counter) as SafetyRecord['offered'];
  cut.injections = shortenStrings(record.injections, counter) as SafetyRecord['injections'];
  let droppedEvents = 0;
  // Still over: keep the start and the end of the trajectory (how it began, how it ended).
  while (estimateJsonSize(cut, maxBytes) > maxBytes && trajectory.length > 20) {
    const keep = Math.floor(trajectory.length / 4);
    droppedEvents += trajectory.length - 2 * keep;
    trajectory = [...trajectory.slice(0, keep), ...trajectory.slice(-keep)];
    cut.trajectory = trajectory;
  }
  cut.truncated = { originalBytes, shortenedValues: counter.n, droppedEvents, ...(snapshots > 0 ? { snapshotValues: snapshots } : {}) };
  return { record: cut, text: JSON.stringify(cut) };
}
