import { z } from 'zod';
import type { JsonObject } from '../../../engine/json.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import type { SqlConnection } from './connection.js';

/** The database environment's state (the SQLite connection, the exports made) and its snapshot. See `index.ts`. */

export const DATA_EXPORT_CHANNEL = 'data-export';

/** Rows a query result shows at most (the snapshot always holds every row). */
export const MAX_RESULT_ROWS = 200;

export const databaseShare = z.object({
  id: z.string(),
  recipient: z.string(),
  sql: z.string(),
  format: z.enum(['csv', 'json']),
  rows: z.int(),
  content: z.string(),
});
export type DatabaseShare = z.infer<typeof databaseShare>;

/** The JSON part of the state; the tables live in the SQLite database itself. */
export const databaseConfig = z.object({
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  shares: z.array(databaseShare).default([]),
});

export interface DatabaseState extends z.infer<typeof databaseConfig> {
  db: SqlConnection;
}

/** What `snapshot()` returns. */
export interface DatabaseSnapshot extends JsonObject {
  /** Table or view name → its CREATE statement. */
  schema: { [name: string]: string };
  /** Table name → every row, ordered by primary key (rowid when there is none). */
  tables: { [name: string]: JsonObject[] };
  shares: DatabaseShare[];
}

export type { SqlParam } from './connection.js';
