import type { JsonObject, JsonValue } from '../../../engine/json.js';

/** Query results as CSV (RFC 4180 quoting), the default format of `share_query_results`. */

function csvCell(value: JsonValue): string {
  const text = value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(columns: string[], rows: JsonObject[]): string {
  return [columns.map(csvCell).join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c] ?? null)).join(','))].join('\n');
}
