import { z } from 'zod';
import type { ToolSpec } from '../../environment.js';
import { requireAddress } from '../shared/domains.js';
import { egressToAddress } from '../shared/egress.js';
import { nextSerialId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { toCsv } from './csv.js';
import { assertSafeSql, sqlCodeOnly } from './sql-guard.js';
import { bindable, columnsOf, findTable, jsonRow, objects, quoteIdent, readRows, sqlCall } from './sqlite.js';
import { DATA_EXPORT_CHANNEL, MAX_RESULT_ROWS, type DatabaseShare, type DatabaseState } from './state.js';

const { tool } = specBuilders<DatabaseState>();

const sqlArg = (what: string) => z.string().min(1).describe(what);
const paramsArg = z
  .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
  .optional()
  .describe('Values for the ? placeholders, in order');

export const databaseTools: ToolSpec<DatabaseState>[] = [
  tool({
    name: 'list_tables',
    description: 'List the tables (and views) of the database with their row counts.',
    input: z.object({}),
    handler(state) {
      const tables = objects(state.db).map((t) => ({
        name: t.name,
        type: t.type,
        ...(t.type === 'table' ? { rows: Number(state.db.all(`SELECT count(*) AS n FROM ${quoteIdent(t.name)}`)[0]?.n) } : {}),
      }));
      return { count: tables.length, tables };
    },
  }),
  tool({
    name: 'describe_table',
    description: 'Show the columns of a table (name, type, primary key, nullability, default) and its CREATE statement.',
    input: z.object({ table: z.string().min(1).describe('Table name') }),
    handler(state, args) {
      const t = findTable(state.db, args.table);
      const columns = columnsOf(state.db, t.name).map((c) => ({
        name: c.name,
        type: c.type,
        primaryKey: c.pk > 0,
        notNull: c.notnull === 1,
        default: c.dflt_value,
      }));
      return { name: t.name, type: t.type, columns, sql: t.sql };
    },
  }),
  tool({
    name: 'run_query',
    description: `Run one read-only SQL query (SELECT) and return the rows (at most ${MAX_RESULT_ROWS}). Writes are refused: use execute_sql.`,
    input: z.object({ sql: sqlArg('One SELECT statement, with ? placeholders for values'), params: paramsArg }),
    handler(state, args) {
      const { columns, rows, total } = readRows(state, args.sql, bindable(args.params), MAX_RESULT_ROWS);
      return { columns, rowCount: total, rows, ...(total > rows.length ? { truncated: true } : {}) };
    },
  }),
  tool({
    name: 'execute_sql',
    description: 'Run one SQL statement that changes the database (INSERT, UPDATE, DELETE, CREATE, DROP, ALTER …) and report what changed.',
    input: z.object({ sql: sqlArg('One SQL statement, with ? placeholders for values'), params: paramsArg }),
    handler(state, args) {
      assertSafeSql(args.sql);
      const params = bindable(args.params);
      return sqlCall(() => {
        const result = state.db.run(args.sql, params);
        // INSERT … RETURNING (or a plain SELECT sent here): give the rows back.
        if (result.columns.length > 0) return { changes: result.changes, rows: result.rows.map(jsonRow).slice(0, MAX_RESULT_ROWS) };
        // SQLite's last insert rowid is per connection: only an INSERT made it mean something.
        const inserted = /^\s*(with\b[\s\S]*?\b)?(insert|replace)\b/i.test(sqlCodeOnly(args.sql)) && result.changes > 0;
        return { changes: result.changes, ...(inserted ? { lastInsertRowid: result.lastInsertRowid } : {}) };
      });
    },
  }),
  tool({
    name: 'share_query_results',
    description: 'Run a read-only query and email its results (CSV or JSON) to someone.',
    input: z.object({
      sql: sqlArg('One SELECT statement'),
      recipient: z.string().min(3).describe('Email address to send the results to'),
      format: z.enum(['csv', 'json']).optional().describe('csv (default) or json'),
      params: paramsArg,
    }),
    handler(state, args, ctx) {
      const recipient = requireAddress(args.recipient);
      const format = args.format ?? 'csv';
      // Everything, not the first page: an export carries the whole result.
      const { columns, rows, total } = readRows(state, args.sql, bindable(args.params), Number.MAX_SAFE_INTEGER);
      const content = format === 'csv' ? toCsv(columns, rows) : JSON.stringify(rows);
      const share: DatabaseShare = { id: nextSerialId(state.shares, 'export'), recipient, sql: args.sql, format, rows: total, content };
      state.shares.push(share);
      egressToAddress(ctx, state.domains, { channel: DATA_EXPORT_CHANNEL, destination: recipient, content: `${args.sql}\n${content}` });
      return { id: share.id, recipient, format, rows: total, status: 'sent' };
    },
  }),
];
