/**
 * OpenAI Chat Completions wire format for the scripted model server: request JSON → Conversation,
 * ModelReply → `chat.completion` JSON or `chat.completion.chunk` SSE stream (tool calls streamed
 * the way OpenAI does: index + id + name first, then argument fragments).
 */
import type { Conversation, ConversationMessage, ConversationTool, ConversationToolCall } from './conversation.js';
import { splitAgentContext } from './agent-context.js';
import { isPlainObject } from './directives.js';
import { WireRequestError, type WireAdapter, type WireContext, type WireReply } from './scripted-model-server.js';

const TEXT_PIECE = 24;
const ARGUMENT_PIECE = 16;

/** A message's text parts (a string content is one part). */
function contentParts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (content === null || content === undefined) return [];
  if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const part of content) {
      if (typeof part === 'string') parts.push(part);
      else if (isPlainObject(part)) {
        if (typeof part.text === 'string') parts.push(part.text);
        else if (typeof part.refusal === 'string') parts.push(part.refusal);
      }
    }
    return parts;
  }
  throw new WireRequestError(`Invalid message content: expected a string, null or an array of parts`);
}

function contentText(content: unknown): string {
  return contentParts(content).join('\n');
}

function parseArguments(raw: unknown): Record<string, unknown> {
  if (isPlainObject(raw)) return raw;
  if (typeof raw !== 'string' || raw.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return isPlainObject(value) ? value : { _value: value };
  } catch {
    return { _unparsed: raw };
  }
}

function readToolCalls(message: Record<string, unknown>, names: Map<string, string>): ConversationToolCall[] | undefined {
  const calls: ConversationToolCall[] = [];
  if (Array.isArray(message.tool_calls)) {
    for (const [i, call] of message.tool_calls.entries()) {
      if (!isPlainObject(call)) continue;
      const fn = isPlainObject(call.function) ? call.function : isPlainObject(call.custom) ? call.custom : {};
      const id = typeof call.id === 'string' ? call.id : `call_unnamed_${i}`;
      const name = typeof fn.name === 'string' ? fn.name : '';
      names.set(id, name);
      calls.push({ id, name, arguments: parseArguments(fn.arguments ?? fn.input) });
    }
  } else if (isPlainObject(message.function_call) && typeof message.function_call.name === 'string') {
    const name = message.function_call.name;
    names.set(name, name);
    calls.push({ id: name, name, arguments: parseArguments(message.function_call.arguments) });
  }
  return calls.length > 0 ? calls : undefined;
}

function readTools(body: Record<string, unknown>): ConversationTool[] {
  const tools: ConversationTool[] = [];
  const add = (fn: unknown) => {
    if (!isPlainObject(fn) || typeof fn.name !== 'string') return;
    const tool: ConversationTool = { name: fn.name };
    if (typeof fn.description === 'string') tool.description = fn.description;
    if (fn.parameters !== undefined) tool.parameters = fn.parameters;
    tools.push(tool);
  };
  if (Array.isArray(body.tools)) {
    for (const t of body.tools) if (isPlainObject(t)) add(t.function ?? t.custom);
  }
  if (Array.isArray(body.functions)) for (const f of body.functions) add(f);
  return tools;
}

/** Normalizes a Chat Completions request body. Throws WireRequestError (HTTP 400) when malformed. */
export function chatRequestToConversation(body: unknown): Conversation {
  if (!isPlainObject(body)) throw new WireRequestError('Request body must be a JSON object');
  if (!Array.isArray(body.messages)) throw new WireRequestError("Missing required parameter: 'messages'", 'messages');
  const names = new Map<string, string>();
  const messages: ConversationMessage[] = [];
  for (const [i, m] of body.messages.entries()) {
    if (!isPlainObject(m) || typeof m.role !== 'string') {
      throw new WireRequestError(`Invalid message at index ${i}: expected an object with a role`, `messages[${i}]`);
    }
    switch (m.role) {
      case 'system':
      case 'developer':
        messages.push({ role: 'system', text: contentText(m.content) });
        break;
      case 'user': {
        // Context an agent program sends as parts of the user's message (Qwen Code's `<system-reminder>`
        // parts before the prompt) is its own context message, as on the other wires.
        const { text, context } = splitAgentContext(contentParts(m.content));
        if (context) messages.push({ role: 'user', text: context, context: true });
        if (text || !context) messages.push({ role: 'user', text });
        break;
      }
      case 'assistant': {
        const message: ConversationMessage = { role: 'assistant', text: contentText(m.content) };
        const toolCalls = readToolCalls(m, names);
        if (toolCalls) message.toolCalls = toolCalls;
        messages.push(message);
        break;
      }
      case 'tool':
      case 'function': {
        const message: ConversationMessage = { role: 'tool', text: contentText(m.content) };
        const id = typeof m.tool_call_id === 'string' ? m.tool_call_id : typeof m.name === 'string' ? m.name : undefined;
        if (id !== undefined) message.toolCallId = id;
        const name = (id !== undefined ? names.get(id) : undefined) ?? (typeof m.name === 'string' ? m.name : undefined);
        if (name) message.toolName = name;
        messages.push(message);
        break;
      }
      default:
        throw new WireRequestError(`Invalid role "${m.role}" for message at index ${i}`, `messages[${i}].role`);
    }
  }
  return { model: typeof body.model === 'string' ? body.model : '', messages, tools: readTools(body) };
}

function wantsUsage(body: unknown): boolean {
  return isPlainObject(body) && isPlainObject(body.stream_options) && body.stream_options.include_usage === true;
}

function usageBody(ctx: WireContext) {
  const { promptTokens, completionTokens } = ctx.usage;
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function finishReason(reply: WireReply): 'tool_calls' | 'stop' {
  return reply.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** The non-streaming `chat.completion` body. */
export function chatCompletionBody(reply: WireReply, ctx: WireContext) {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: reply.text === '' && reply.toolCalls.length > 0 ? null : reply.text,
    refusal: null,
  };
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  }
  return {
    id: `chatcmpl-vera${ctx.requestNumber}`,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(reply) }],
    usage: usageBody(ctx),
    system_fingerprint: 'fp_vera_scripted',
  };
}

/** Splits text into pieces of about `size` characters, preferring word boundaries. */
function pieces(text: string, size: number, words: boolean): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(i + size, text.length);
    if (words && end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > i) end = space + 1;
    }
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/** The `chat.completion.chunk` objects of a streamed reply, in order (without `[DONE]`). */
export function chatCompletionChunks(reply: WireReply, ctx: WireContext, includeUsage: boolean): object[] {
  const base = {
    id: `chatcmpl-vera${ctx.requestNumber}`,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: 'fp_vera_scripted',
  };
  const extra = includeUsage ? { usage: null } : {};
  const chunk = (delta: object, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...extra,
  });
  const chunks: object[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of pieces(reply.text, TEXT_PIECE, true)) chunks.push(chunk({ content: piece }));
  reply.toolCalls.forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of pieces(JSON.stringify(call.arguments), ARGUMENT_PIECE, false)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, finishReason(reply)));
  if (includeUsage) chunks.push({ ...base, choices: [], usage: usageBody(ctx) });
  return chunks;
}

/** Chat Completions on `POST /v1/chat/completions`. */
export const chatCompletionsWire: WireAdapter = {
  name: 'chat-completions',
  path: '/v1/chat/completions',
  toConversation: chatRequestToConversation,
  isStream: (body) => isPlainObject(body) && body.stream === true,
  replyBody: (reply, ctx) => chatCompletionBody(reply, ctx),
  replyStream(reply, ctx, body) {
    let out = '';
    for (const c of chatCompletionChunks(reply, ctx, wantsUsage(body))) out += `data: ${JSON.stringify(c)}\n\n`;
    return `${out}data: [DONE]\n\n`;
  },
  errorBody: (message, type, code, param) => ({ error: { message, type, param: param ?? null, code } }),
};
