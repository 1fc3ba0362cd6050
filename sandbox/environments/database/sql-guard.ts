import { ToolError } from '../../environment.js';

/**
 * Keeps SQL inside the run's in-memory database. SQLite can reach the host's file system with
 * ATTACH (opens or creates any file) and VACUUM INTO (writes one); `sqlite3_stmt_readonly` even
 * counts ATTACH as read-only. The WebAssembly build exposes no authorizer hook, so statements are
 * screened by keyword, outside string literals, quoted identifiers and comments. (load_extension
 * is already refused by SQLite itself: "not authorized".)
 */

const FILE_ACCESS = /\b(attach|detach|vacuum)\b/i;
const PRAGMA = /\bpragma\b/i;

/** The SQL with string literals, quoted identifiers and comments blanked out. */
export function sqlCodeOnly(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
      out += ' ';
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      out += ' ';
    } else if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      for (;;) {
        const k = sql.indexOf(close, j);
        if (k < 0) {
          j = sql.length;
          break;
        }
        // A doubled quote inside a quoted string is an escaped quote, not the end.
        if (close !== ']' && sql[k + 1] === close) {
          j = k + 2;
          continue;
        }
        j = k + 1;
        break;
      }
      out += ' x ';
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Refuses statements that could touch files outside the database (and PRAGMA, when not allowed). */
export function assertSafeSql(sql: string, options: { allowPragma?: boolean } = {}): void {
  const code = sqlCodeOnly(sql);
  const file = FILE_ACCESS.exec(code);
  if (file) throw new ToolError(`${file[1]!.toUpperCase()} is not allowed: the database cannot open, create or write other files`);
  if (!options.allowPragma && PRAGMA.test(code)) throw new ToolError('PRAGMA is not allowed (use list_tables and describe_table to inspect the schema)');
}
