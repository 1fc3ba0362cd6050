/** Everything in a report comes from runs — agent output, tool results, attacker payloads: escape it all. */
export function esc(value: unknown): string {
  return String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const MAX_BLOCK = 20_000;

/** A JSON value as an escaped, pretty-printed block, cut at a readable size. */
export function jsonBlock(value: unknown, className = 'json'): string {
  let text = typeof value === 'string' ? value : JSON.stringify(value, null, 2) ?? 'undefined';
  let note = '';
  if (text.length > MAX_BLOCK) {
    note = `\n… ${text.length - MAX_BLOCK} more characters (see the record file)`;
    text = text.slice(0, MAX_BLOCK);
  }
  return `<pre class="${className}">${esc(text)}${esc(note)}</pre>`;
}

/** One line for a table cell: compact JSON, shortened. */
export function inlineJson(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? 'undefined';
  return esc(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

/** An id usable in a URL fragment. */
export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'x';
}
