import type { z } from 'zod';
import { isPlainObject } from './json.js';
import { RECORD_SCHEMA, safetyRecordSchema, type SafetyRecord } from './record-schema.js';

/**
 * Reading a stored record: its version is checked, older shapes are upgraded to the current one,
 * and the result is validated against the record schema — so reports and `vera replay` work on
 * records they can trust, and a bad file is named with the field that is wrong instead of
 * crashing a report halfway or being judged on garbage.
 */

/** What one JSON value read from a records directory turned out to be. */
export type ParsedRecord =
  | { kind: 'record'; record: SafetyRecord }
  /** Not a Vera record at all (a summary, a report, some other JSON): nothing to say about it. */
  | { kind: 'other' }
  /** A Vera record that cannot be used, and why (the field path and what is wrong with it). */
  | { kind: 'problem'; problem: string };

const PREFIX = 'vera.record/v';
const CURRENT_VERSION = Number(RECORD_SCHEMA.slice(PREFIX.length));

/**
 * One upgrade step. `from` is the version of the records it applies to and `to` the version it
 * produces: equal when the step repairs an earlier shape that was written under the same version
 * string, one more when the version changes. Steps run in list order, so a record passes through
 * every step from its own version to the current one.
 */
export interface RecordMigration {
  from: number;
  to: number;
  /** What changed, and since when. */
  why: string;
  upgrade(record: Record<string, unknown>): Record<string, unknown>;
}

export const recordMigrations: readonly RecordMigration[] = [
  {
    from: 1,
    to: 1,
    why: 'records written before model time was measured (commit 793aece) have no timings.modelMs; 0 is what a run records when its adapter reports no model time',
    upgrade(record) {
      const timings = record.timings;
      if (!isPlainObject(timings) || 'modelMs' in timings) return record;
      return { ...record, timings: { ...timings, modelMs: 0 } };
    },
  },
];

/** The record version a `schema` string names (`vera.record/v3` → 3); undefined when it names none. */
export function recordVersion(schema: string): number | undefined {
  if (!schema.startsWith(PREFIX)) return undefined;
  const digits = schema.slice(PREFIX.length);
  return /^[1-9]\d*$/.test(digits) ? Number(digits) : undefined;
}

/**
 * A parsed JSON value as a current-version record: upgraded when it is older, refused with a
 * reason when it is newer than this code, invalid, or of an unknown version.
 */
export function parseRecord(value: unknown, migrations: readonly RecordMigration[] = recordMigrations): ParsedRecord {
  if (!isPlainObject(value) || typeof value.schema !== 'string' || !value.schema.startsWith('vera.record/')) return { kind: 'other' };
  const version = recordVersion(value.schema);
  if (version === undefined) return { kind: 'problem', problem: `unknown record version "${value.schema}" (this Vera reads ${RECORD_SCHEMA} and older)` };
  if (version > CURRENT_VERSION) {
    return { kind: 'problem', problem: `${value.schema} is newer than this Vera reads (${RECORD_SCHEMA}): upgrade vera-safety to read it` };
  }
  let upgraded = value;
  let at = version;
  for (const step of migrations) {
    if (step.from !== at) continue;
    upgraded = step.upgrade(upgraded);
    at = step.to;
  }
  if (at !== CURRENT_VERSION) return { kind: 'problem', problem: `no upgrade from ${value.schema} to ${RECORD_SCHEMA}` };
  const parsed = safetyRecordSchema.safeParse(at === version ? upgraded : { ...upgraded, schema: RECORD_SCHEMA }, { error: missingField });
  if (parsed.success) return { kind: 'record', record: parsed.data };
  const [first, ...rest] = parsed.error.issues;
  if (!first) return { kind: 'problem', problem: 'not a valid record' };
  const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
  return { kind: 'problem', problem: `${formatIssuePath(first.path)}: ${first.message.replace(/^Invalid input: /, '')}${more}` };
}

/** "missing" says more than zod's "expected string, received undefined". */
const missingField: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== 'invalid_type' || issue.input !== undefined) return undefined;
  return issue.expected === 'nonoptional' ? 'missing' : `missing (expected ${issue.expected})`;
};

/** A zod issue path the way the verifier writes paths: `trajectory[3].tool`, `secrets["a b"]`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || '(the record)';
}
