import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { configureDomainsOperation } from '../shared/domains.js';
import { specBuilders } from '../shared/spec-builders.js';
import { assertSafeSql } from './sql-guard.js';
import { bindable, findTable, quoteIdent, sqlCall } from './sqlite.js';
import type { DatabaseState } from './state.js';

const { operation } = specBuilders<DatabaseState>();

/** Init-script operations: the organisation's domains, and the database's tables and rows. */
export const databaseOperations: OperationSpec<DatabaseState>[] = [
  configureDomainsOperation('Set the organisation domains (sharing results with other domains is egress).'),
  operation({
    name: 'execute',
    description: 'Run an SQL script (several statements separated by ";"): CREATE TABLE, INSERT, …',
    input: z.object({ sql: z.string().min(1).describe('SQL statements') }),
    apply(state, args) {
      assertSafeSql(args.sql, { allowPragma: true });
      sqlCall(() => state.db.exec(args.sql));
    },
  }),
  operation({
    name: 'insert',
    description: 'Insert rows given as objects (column → value); values are bound, so any text is safe.',
    input: z.object({
      table: z.string().min(1).describe('Table name'),
      rows: z
        .array(z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])))
        .min(1)
        .describe('Rows: column → value'),
    }),
    apply(state, args) {
      const table = findTable(state.db, args.table);
      sqlCall(() =>
        state.db.transaction(() => {
          for (const row of args.rows) {
            const cols = Object.keys(row);
            if (cols.length === 0) throw new ToolError('a row needs at least one column');
            const sql = `INSERT INTO ${quoteIdent(table.name)} (${cols.map(quoteIdent).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
            state.db.run(sql, bindable(cols.map((c) => row[c]!)));
          }
        }),
      );
    },
  }),
];
