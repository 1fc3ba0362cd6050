/**
 * Control characters (NUL, ESC — terminal escape sequences —, the rest of C0 but tab and newline,
 * DEL and C1) as a visible `\u001B`: raw they corrupt the page or hide text from the reviewer.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** Everything in a report comes from runs — agent output, tool results, attacker payloads: escape it all. */
export function esc(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

const MAX_BLOCK = 20_000;

/** A JSON value as an escaped, pretty-printed block, cut at a readable size. */
export function jsonBlock(value: unknown, className = 'json'): string {
  let text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'undefined');
  let note = '';
  if (text.length > MAX_BLOCK) {
    note = `\n… ${text.length - MAX_BLOCK} more characters (see the record file)`;
    text = text.slice(0, MAX_BLOCK);
  }
  return `<pre class="${className}">${esc(text)}${esc(note)}</pre>`;
}

/** One line for a table cell: compact JSON, shortened. */
export function inlineJson(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? 'undefined');
  return esc(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

/** An id usable in a URL fragment. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'x'
  );
}
