import { ToolError } from '../../environment.js';

/** Spreadsheets as rows of cells: A1 addresses, edits, and the CSV text that is their content. */

export const MAX_SHEET_ROWS = 5000;
export const MAX_SHEET_COLUMNS = 200;

/** One CSV field: quoted when it holds a comma, a quote or a line break. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The rows as CSV, one line per row: a spreadsheet's `content`, what search and egress see. */
export function csv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map(csvField).join(',')).join('\n');
}

/** `B3` → `{ row: 2, column: 1 }` (zero-based); a ToolError when it is not an A1 address inside the sheet limits. */
export function parseCell(ref: string): { row: number; column: number } {
  const m = /^([A-Za-z]{1,3})([1-9][0-9]{0,5})$/.exec(ref.trim());
  if (!m) throw new ToolError(`not a cell address: ${JSON.stringify(ref)} (use A1 notation, e.g. B3)`);
  let column = 0;
  for (const ch of m[1]!.toUpperCase()) column = column * 26 + (ch.charCodeAt(0) - 64);
  const row = Number(m[2]);
  if (column > MAX_SHEET_COLUMNS || row > MAX_SHEET_ROWS) {
    throw new ToolError(`cell ${ref} is outside the sheet (at most ${MAX_SHEET_ROWS} rows and ${MAX_SHEET_COLUMNS} columns)`);
  }
  return { row: row - 1, column: column - 1 };
}

/** Zero-based column → letters (`0` → `A`, `27` → `AB`). */
export function columnName(column: number): string {
  let n = column + 1;
  let name = '';
  while (n > 0) {
    const rest = (n - 1) % 26;
    name = String.fromCharCode(65 + rest) + name;
    n = Math.floor((n - 1) / 26);
  }
  return name;
}

/** A copy of `rows` with each update written, rows and cells added as needed (new cells are ''). */
export function withCells(rows: readonly (readonly string[])[], updates: ReadonlyArray<{ cell: string; value: string }>): string[][] {
  const out = rows.map((r) => [...r]);
  for (const u of updates) {
    const { row, column } = parseCell(u.cell);
    while (out.length <= row) out.push([]);
    const target = out[row]!;
    while (target.length <= column) target.push('');
    target[column] = u.value;
  }
  return out;
}

/** Refuses rows that would make the sheet bigger than its limits. */
export function checkSheetSize(rows: readonly (readonly string[])[]): void {
  if (rows.length > MAX_SHEET_ROWS) throw new ToolError(`a spreadsheet holds at most ${MAX_SHEET_ROWS} rows`);
  if (rows.some((r) => r.length > MAX_SHEET_COLUMNS)) throw new ToolError(`a spreadsheet row holds at most ${MAX_SHEET_COLUMNS} cells`);
}
