import type { JsonObject, JsonValue } from '../../../engine/json.js';
import { ITEM_KEY } from '../../../engine/state-items.js';
import { ToolError } from '../../environment.js';
import type { SqlConnection } from './connection.js';
import { assertSafeSql } from './sql-guard.js';
import type { DatabaseSnapshot, DatabaseState, SqlParam } from './state.js';

/** Working with the run's SQLite database: values as JSON, errors the agent reads, the schema, reads, the snapshot. */

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** SQLite values as JSON: blobs become `{ base64 }`. */
function jsonValue(value: unknown): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') };
  return String(value);
}

export function jsonRow(row: unknown): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(row as Record<string, unknown>)) out[k] = jsonValue(v);
  return out;
}

/** Runs SQLite work, turning its errors into errors the agent reads. */
export function sqlCall<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw new ToolError(`SQL error: ${(error as Error).message}`);
  }
}

export function bindable(params: Array<string | number | boolean | null> | undefined): SqlParam[] {
  return (params ?? []).map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

export interface TableInfo {
  name: string;
  type: 'table' | 'view';
  sql: string;
}

export function objects(db: SqlConnection): TableInfo[] {
  return db.all(
    "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
  ) as unknown as TableInfo[];
}

export function columnsOf(db: SqlConnection, table: string) {
  return db.all(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, [table]) as unknown as Array<{
    name: string;
    type: string;
    notnull: number;
    dflt_value: string | null;
    pk: number;
  }>;
}

export function findTable(db: SqlConnection, name: string): TableInfo {
  const wanted = name.trim().replace(/^"|"$/g, '');
  const found = objects(db).find((t) => t.name.toLowerCase() === wanted.toLowerCase());
  if (!found)
    throw new ToolError(
      `no table "${name}" (tables: ${
        objects(db)
          .map((t) => t.name)
          .join(', ') || 'none'
      })`,
    );
  return found;
}

/**
 * How the snapshot reads a table: ordered by its primary key (rowid when there is none), each row
 * carrying its identity when `id` does not already say it — the primary key's value (an array for a
 * composite key) or SQLite's rowid in `$key`. The verifier tells rows apart by that identity, never
 * by their content: two equal rows are two rows, and a row whose key is `sku` is changed, not
 * removed and added, when its price changes.
 */
function snapshotQuery(db: SqlConnection, table: TableInfo): string {
  const pk = columnsOf(db, table.name)
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => quoteIdent(c.name));
  const from = `FROM ${quoteIdent(table.name)}`;
  if (pk.length === 1 && pk[0] === '"id"') return `SELECT * ${from} ORDER BY "id"`;
  if (pk.length === 1) return `SELECT *, ${pk[0]} AS ${quoteIdent(ITEM_KEY)} ${from} ORDER BY ${pk[0]}`;
  if (pk.length > 1) return `SELECT *, json_array(${pk.join(', ')}) AS ${quoteIdent(ITEM_KEY)} ${from} ORDER BY ${pk.join(', ')}`;
  // A WITHOUT ROWID table always has a primary key; every other table has a rowid.
  return `SELECT *, rowid AS ${quoteIdent(ITEM_KEY)} ${from} ORDER BY rowid`;
}

/** Every table's rows, by primary key, and every CREATE statement. */
export function snapshotDatabase(state: DatabaseState): DatabaseSnapshot {
  const schema: DatabaseSnapshot['schema'] = {};
  const tables: DatabaseSnapshot['tables'] = {};
  for (const t of objects(state.db)) {
    schema[t.name] = t.sql;
    if (t.type !== 'table') continue;
    tables[t.name] = state.db.all(snapshotQuery(state.db, t)).map(jsonRow);
  }
  return { schema, tables, shares: state.shares.map((s) => ({ ...s })) };
}

/** Runs one read-only query (writes are refused), keeping at most `max` rows and counting all of them. */
export function readRows(state: DatabaseState, sql: string, params: SqlParam[], max: number) {
  assertSafeSql(sql);
  return sqlCall(() => {
    const rows: JsonObject[] = [];
    let total = 0;
    const columns = state.db.readOnly(sql, params, (row) => {
      if (total < max) rows.push(jsonRow(row));
      total++;
    });
    return { columns, rows, total };
  });
}
