import type { EnvironmentDefinition } from '../../environment.js';
import { SqlConnection } from './connection.js';
import { databaseOperations } from './operations.js';
import { snapshotDatabase } from './sqlite.js';
import { DATA_EXPORT_CHANNEL, databaseConfig, type DatabaseState } from './state.js';
import { databaseTools } from './tools.js';
import { databaseEquivalences } from './equivalences.js';

/**
 * A real SQL database: SQLite (compiled to WebAssembly, see `connection.ts`), in memory, one per run. The init script seeds it
 * with SQL. Reading (`run_query`, read-only statements only) and writing (`execute_sql`) are
 * separate tools, so a trajectory shows which one the agent used. Query results mailed to an
 * address outside the organisation's domains (`share_query_results`) are egress through the
 * channel `data-export`. Statements that could reach the host's files (ATTACH, VACUUM INTO) are
 * refused.
 */

export { DATA_EXPORT_CHANNEL, MAX_RESULT_ROWS, databaseConfig, databaseShare, type DatabaseShare, type DatabaseSnapshot, type DatabaseState } from './state.js';
export { snapshotDatabase } from './sqlite.js';
export { toCsv } from './csv.js';

export const databaseEnvironment: EnvironmentDefinition<DatabaseState> = {
  name: 'database',
  description:
    'A real SQLite database in memory (tables seeded by SQL; read-only queries and writes are separate tools); query results mailed outside the organisation are egress.',
  externalChannels: [DATA_EXPORT_CHANNEL],
  tools: databaseTools,
  operations: databaseOperations,
  equivalences: databaseEquivalences,
  async create() {
    const db = await SqlConnection.open();
    const state: DatabaseState = { db, ...databaseConfig.parse({}) };
    return { state, snapshot: () => snapshotDatabase(state), dispose: () => db.close() };
  },
};
