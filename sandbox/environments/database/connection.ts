import initSqlJs from 'sql.js';
import { ToolError } from '../../environment.js';

/**
 * The run's SQLite database: SQLite compiled to WebAssembly (sql.js), in memory. WebAssembly, not a
 * native addon, so installing Vera compiles nothing and needs no build tools (a native SQLite binding
 * was most of a fresh install's time where its prebuilt binary could not be downloaded). The engine
 * is loaded once per process; each run opens its own database. This class is the only code that
 * talks to sql.js: the environment's tools and operations go through these few calls.
 */

type Engine = Awaited<ReturnType<typeof initSqlJs>>;
type Statement = ReturnType<InstanceType<Engine['Database']>['prepare']>;
export type SqlParam = string | number | null;
export type SqlRow = Record<string, unknown>;

let engine: Promise<Engine> | undefined;

/** SQLite's message for a write under `PRAGMA query_only`. */
const READ_ONLY_REFUSAL = /attempt to write a readonly database/;

export class SqlConnection {
  #closed = false;

  private constructor(private readonly db: InstanceType<Engine['Database']>) {}

  static async open(): Promise<SqlConnection> {
    engine ??= initSqlJs();
    const connection = new SqlConnection(new (await engine).Database());
    connection.exec('PRAGMA foreign_keys = ON');
    return connection;
  }

  /** Runs a script of statements separated by ";" (init scripts). */
  exec(script: string): void {
    this.db.exec(script);
  }

  /** Every row of one statement, as column → value. */
  all(sql: string, params: SqlParam[] = []): SqlRow[] {
    const rows: SqlRow[] = [];
    this.each(sql, params, (row) => rows.push(row));
    return rows;
  }

  /** Calls `onRow` for each row of one statement; returns its column names. */
  each(sql: string, params: SqlParam[], onRow: (row: SqlRow) => void): string[] {
    const stmt = this.prepareOne(sql);
    try {
      stmt.bind(params);
      while (stmt.step()) onRow(stmt.getAsObject());
      return stmt.getColumnNames();
    } finally {
      stmt.free();
    }
  }

  /**
   * Runs one statement with SQLite's `query_only` on: any write (INSERT … RETURNING, a CTE that
   * writes, a temp table) is refused by SQLite itself, and a statement that returns no rows (BEGIN,
   * a bare UPDATE) is refused before it runs.
   */
  readOnly(sql: string, params: SqlParam[], onRow: (row: SqlRow) => void): string[] {
    const stmt = this.prepareOne(sql);
    const refused = () => new ToolError('run_query only runs read-only queries (SELECT, WITH … SELECT); use execute_sql to change data');
    try {
      const columns = stmt.getColumnNames();
      if (columns.length === 0) throw refused();
      this.db.exec('PRAGMA query_only = ON');
      try {
        stmt.bind(params);
        while (stmt.step()) onRow(stmt.getAsObject());
      } catch (error) {
        if (READ_ONLY_REFUSAL.test((error as Error).message)) throw refused();
        throw error;
      } finally {
        this.db.exec('PRAGMA query_only = OFF');
      }
      return columns;
    } finally {
      stmt.free();
    }
  }

  /**
   * Runs one statement that may change the database. `changes` counts the rows it changed itself
   * (as SQLite's `changes()`, zero when the statement changed nothing, e.g. a SELECT or CREATE);
   * `rows` holds what it returned (a SELECT, or INSERT … RETURNING).
   */
  run(sql: string, params: SqlParam[]): { changes: number; lastInsertRowid: number; columns: string[]; rows: SqlRow[] } {
    const before = this.scalar('SELECT total_changes()');
    const rows: SqlRow[] = [];
    const columns = this.each(sql, params, (row) => rows.push(row));
    const changed = this.scalar('SELECT total_changes()') !== before;
    return { changes: changed ? this.db.getRowsModified() : 0, lastInsertRowid: this.scalar('SELECT last_insert_rowid()'), columns, rows };
  }

  /** Runs `work` in a savepoint: all of it, or (when it throws) none of it. */
  transaction<T>(work: () => T): T {
    this.db.exec('SAVEPOINT vera_work');
    try {
      const result = work();
      this.db.exec('RELEASE vera_work');
      return result;
    } catch (error) {
      this.db.exec('ROLLBACK TO vera_work; RELEASE vera_work');
      throw error;
    }
  }

  get open(): boolean {
    return !this.#closed;
  }

  /** Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.db.close();
  }

  private scalar(sql: string): number {
    return Number(this.db.exec(sql)[0]?.values[0]?.[0] ?? 0);
  }

  /** Prepares exactly one statement: an empty text or a ";"-separated script is the agent's mistake. */
  private prepareOne(sql: string): Statement {
    // The iterator compiles statement by statement (and frees each when it moves on): it counts
    // without running anything. Comments and blanks after the last ";" are no statement.
    let count = 0;
    for (const _ of this.db.iterateStatements(sql)) if (++count > 1) break;
    if (count === 0) throw new ToolError('the SQL is empty');
    if (count > 1) throw new ToolError('one SQL statement per call, please (no ";"-separated scripts)');
    return this.db.prepare(sql);
  }
}
