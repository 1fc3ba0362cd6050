import { createHash } from 'node:crypto';
import { isPlainObject } from '../engine/json.js';
import type { ModelPrompt, OfferedTool } from '../engine/record-schema.js';

/**
 * What a model request offered the model — its system prompt and its tool list — read from the
 * request body without knowing which wire it is: Chat Completions (`messages` with role
 * system/developer, `tools[].function`), Responses (`instructions`, developer items of `input`,
 * `tools` with Codex's `namespace` groups and hosted tools), Anthropic Messages (`system`,
 * `tools`, server tools with a `type`), the Gemini API (`systemInstruction`,
 * `tools[].functionDeclarations`).
 */

/** Descriptions are cut here: the names say what was offered; Claude Code's run to 46 KB in all. */
const DESCRIPTION_CHARS = 300;
/** A system prompt is kept whole up to this (it is what the model was told). */
const SYSTEM_CHARS = 64 * 1024;

function record(value: unknown): Record<string, unknown> | undefined {
  return isPlainObject(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Text of a content value: a string, or the `text` of each part (`{ type: 'text', text }`, `{ text }`). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) => str(record(part)?.text) ?? '')
      .filter(Boolean)
      .join('\n');
  const parts = record(content)?.parts;
  return Array.isArray(parts) ? contentText(parts) : '';
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length} characters]` : text;
}

function systemOf(body: Record<string, unknown>): string {
  const parts: string[] = [];
  if (body.system !== undefined) parts.push(contentText(body.system));
  if (typeof body.instructions === 'string') parts.push(body.instructions);
  if (body.systemInstruction !== undefined) parts.push(contentText(body.systemInstruction));
  for (const list of [body.messages, body.input]) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const m = record(item);
      if (m && (m.role === 'system' || m.role === 'developer')) parts.push(contentText(m.content));
    }
  }
  return cut(parts.filter((p) => p !== '').join('\n\n'), SYSTEM_CHARS);
}

function tool(name: string, extra: { namespace?: string; type?: string; description?: unknown }): OfferedTool {
  const description = str(extra.description);
  return {
    name,
    ...(extra.namespace ? { namespace: extra.namespace } : {}),
    ...(extra.type ? { type: extra.type } : {}),
    ...(description ? { description: cut(description, DESCRIPTION_CHARS) } : {}),
  };
}

function toolsOf(body: Record<string, unknown>): OfferedTool[] {
  if (!Array.isArray(body.tools)) return [];
  const out: OfferedTool[] = [];
  for (const entry of body.tools) {
    const t = record(entry);
    if (!t) continue;
    const fn = record(t.function);
    const type = str(t.type);
    if (fn && typeof fn.name === 'string') out.push(tool(fn.name, { description: fn.description }));
    else if (type === 'namespace' && Array.isArray(t.tools)) {
      for (const inner of t.tools.map(record))
        if (inner && typeof inner.name === 'string') out.push(tool(inner.name, { namespace: str(t.name), description: inner.description }));
    } else if (Array.isArray(t.functionDeclarations)) {
      for (const d of t.functionDeclarations.map(record)) if (d && typeof d.name === 'string') out.push(tool(d.name, { description: d.description }));
    } else if (typeof t.name === 'string') {
      // Plain tools have no type (Anthropic) or `function`/`custom`; others are the provider's own.
      out.push(tool(t.name, { type: type && type !== 'function' && type !== 'custom' ? type : undefined, description: t.description }));
    } else if (type) out.push(tool(type, { type }));
    else for (const key of Object.keys(t)) out.push(tool(key, { type: key })); // Gemini's { googleSearch: {} }
  }
  return out;
}

/**
 * The prompt a parsed request body offered, or undefined when it is no model request (a probe,
 * a token count without messages). `key` identifies it within a run, so each distinct prompt is
 * kept once.
 */
export function offerOf(body: unknown): { prompt: ModelPrompt; key: string } | undefined {
  const b = record(body);
  if (!b || !(Array.isArray(b.messages) || Array.isArray(b.input) || typeof b.input === 'string' || Array.isArray(b.contents))) return undefined;
  const prompt: ModelPrompt = { system: systemOf(b), tools: toolsOf(b) };
  return { prompt, key: createHash('sha1').update(JSON.stringify(prompt)).digest('base64url') };
}
