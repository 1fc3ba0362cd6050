/**
 * OpenAI Responses API wire format for the scripted model server (`POST /v1/responses`), as
 * Codex speaks it: request `input` items → Conversation, ModelReply → a `response` object or
 * the SSE event sequence (`response.created` … `response.completed`).
 *
 * Tools grouped in a namespace (`{"type": "namespace", "name": "mcp__vera", "tools": [...]}`,
 * how Codex offers MCP tools) are flattened to `mcp__vera__<tool>` for policies and scripts, and
 * a call to one goes back out as `function_call` with `namespace` set. Freeform (`custom`) tools
 * take one string; the policy passes it as the `input` argument and it goes out as
 * `custom_tool_call`.
 */
import { splitAgentContext } from './agent-context.js';
import type { Conversation, ConversationMessage, ConversationTool } from './conversation.js';
import { isPlainObject } from './directives.js';
import { WireRequestError, type WireAdapter, type WireContext, type WireReply } from './scripted-model-server.js';

const TEXT_PIECE = 24;
const ARGUMENT_PIECE = 16;
const NAMESPACE_SEPARATOR = '__';

interface ToolRoute {
  /** Name inside the namespace (or the plain name). */
  name: string;
  namespace?: string;
  kind: 'function' | 'custom';
}

function flatName(name: string, namespace: unknown): string {
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

/** Flattened tool name → how to call it, from the request's `tools`. */
function toolRoutes(body: unknown): Map<string, ToolRoute> {
  const routes = new Map<string, ToolRoute>();
  if (!isPlainObject(body) || !Array.isArray(body.tools)) return routes;
  const add = (tool: Record<string, unknown>, namespace?: string) => {
    if (typeof tool.name !== 'string') return;
    if (tool.type !== 'function' && tool.type !== 'custom') return;
    routes.set(flatName(tool.name, namespace), {
      name: tool.name,
      kind: tool.type,
      ...(namespace ? { namespace } : {}),
    });
  };
  for (const tool of body.tools) {
    if (!isPlainObject(tool)) continue;
    if (tool.type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)) {
      for (const inner of tool.tools) if (isPlainObject(inner)) add(inner, tool.name);
    } else add(tool);
  }
  return routes;
}

function readTools(body: Record<string, unknown>): ConversationTool[] {
  const tools: ConversationTool[] = [];
  if (!Array.isArray(body.tools)) return tools;
  const add = (tool: Record<string, unknown>, namespace?: string) => {
    if (typeof tool.name !== 'string') return;
    if (tool.type !== 'function' && tool.type !== 'custom') return;
    const out: ConversationTool = { name: flatName(tool.name, namespace) };
    if (typeof tool.description === 'string') out.description = tool.description;
    out.parameters = tool.type === 'custom' ? { type: 'object', properties: { input: { type: 'string' } } } : tool.parameters;
    tools.push(out);
  };
  for (const tool of body.tools) {
    if (!isPlainObject(tool)) continue;
    if (tool.type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)) {
      for (const inner of tool.tools) if (isPlainObject(inner)) add(inner, tool.name);
    } else add(tool);
  }
  return tools;
}

/** Text of a message's `content`: a string or `input_text` / `output_text` parts. */
function contentParts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const parts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') parts.push(part);
    else if (isPlainObject(part) && typeof part.text === 'string') parts.push(part.text);
    else if (isPlainObject(part) && typeof part.refusal === 'string') parts.push(part.refusal);
  }
  return parts;
}

/** Codex puts `Wall time: 0.01 seconds\nOutput:` before an MCP result as its own part. */
const CODEX_OUTPUT_HEADER = /^Wall time: [\d.]+ seconds\s*\nOutput:\s*$/;

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    const parts = contentParts(output);
    // Without the header the result is the tool's own text (often JSON, which data references read).
    if (parts.length > 1 && CODEX_OUTPUT_HEADER.test(parts[0]!)) parts.shift();
    return parts.join('\n');
  }
  if (isPlainObject(output) && typeof output.content === 'string') return output.content;
  return output === undefined || output === null ? '' : JSON.stringify(output);
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

/** Normalizes a Responses request body. Throws WireRequestError (HTTP 400) when malformed. */
export function responsesRequestToConversation(body: unknown): Conversation {
  if (!isPlainObject(body)) throw new WireRequestError('Request body must be a JSON object');
  const messages: ConversationMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') messages.push({ role: 'system', text: body.instructions });
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', text: input });
  else if (Array.isArray(input)) {
    const names = new Map<string, string>();
    for (const [i, item] of input.entries()) {
      if (!isPlainObject(item)) throw new WireRequestError(`Invalid input item at index ${i}: expected an object`, `input[${i}]`);
      const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
      switch (type) {
        case 'message': {
          const role = item.role;
          const parts = contentParts(item.content);
          if (role === 'system' || role === 'developer') messages.push({ role: 'system', text: parts.join('\n') });
          else if (role === 'assistant') messages.push({ role: 'assistant', text: parts.join('\n') });
          else if (role === 'user') {
            const { text, context } = splitAgentContext(parts);
            if (context) messages.push({ role: 'user', text: context, context: true });
            if (text || !context) messages.push({ role: 'user', text });
          } else throw new WireRequestError(`Invalid role "${String(role)}" for input item at index ${i}`, `input[${i}].role`);
          break;
        }
        case 'function_call':
        case 'custom_tool_call': {
          const id = typeof item.call_id === 'string' ? item.call_id : `call_unnamed_${i}`;
          const name = flatName(typeof item.name === 'string' ? item.name : '', item.namespace);
          names.set(id, name);
          const args = type === 'custom_tool_call' ? { input: typeof item.input === 'string' ? item.input : '' } : parseArguments(item.arguments);
          const last = messages.at(-1);
          // Parallel calls arrive as consecutive items: one assistant message holds them all.
          if (last?.role === 'assistant' && last.toolCalls && last.text === '') last.toolCalls.push({ id, name, arguments: args });
          else messages.push({ role: 'assistant', text: '', toolCalls: [{ id, name, arguments: args }] });
          break;
        }
        case 'function_call_output':
        case 'custom_tool_call_output': {
          const id = typeof item.call_id === 'string' ? item.call_id : undefined;
          const message: ConversationMessage = { role: 'tool', text: outputText(item.output) };
          if (id !== undefined) {
            message.toolCallId = id;
            const name = names.get(id);
            if (name) message.toolName = name;
          }
          messages.push(message);
          break;
        }
        default:
          // reasoning, web_search_call, compaction, …: nothing a scripted policy reads.
          break;
      }
    }
  } else if (input !== undefined) {
    throw new WireRequestError("Invalid 'input': expected a string or an array of items", 'input');
  }
  return { model: typeof body.model === 'string' ? body.model : '', messages, tools: readTools(body) };
}

function usageBody(ctx: WireContext) {
  const { promptTokens, completionTokens } = ctx.usage;
  return {
    input_tokens: promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: promptTokens + completionTokens,
  };
}

/** The output items of a reply: one assistant message (when there is text), then the calls. */
export function responseOutputItems(reply: WireReply, ctx: WireContext, body: unknown): Array<Record<string, unknown>> {
  const routes = toolRoutes(body);
  const items: Array<Record<string, unknown>> = [];
  if (reply.text !== '' || reply.toolCalls.length === 0) {
    items.push({
      type: 'message',
      id: `msg_vera${ctx.requestNumber}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    });
  }
  for (const call of reply.toolCalls) {
    const route = routes.get(call.name);
    if (route?.kind === 'custom') {
      const input = typeof call.arguments.input === 'string' ? call.arguments.input : JSON.stringify(call.arguments);
      items.push({ type: 'custom_tool_call', id: `ctc_${call.id}`, status: 'completed', call_id: call.id, name: route.name, input });
    } else {
      items.push({
        type: 'function_call',
        id: `fc_${call.id}`,
        status: 'completed',
        call_id: call.id,
        name: route?.name ?? call.name,
        ...(route?.namespace ? { namespace: route.namespace } : {}),
        arguments: JSON.stringify(call.arguments),
      });
    }
  }
  return items;
}

/** The non-streaming `response` object. */
export function responseBody(reply: WireReply, ctx: WireContext, body: unknown, status: 'completed' | 'in_progress' = 'completed') {
  return {
    id: `resp_vera${ctx.requestNumber}`,
    object: 'response',
    created_at: ctx.created,
    status,
    error: null,
    incomplete_details: null,
    model: ctx.model,
    output: status === 'completed' ? responseOutputItems(reply, ctx, body) : [],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    usage: status === 'completed' ? usageBody(ctx) : null,
  };
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The streamed events of a reply, in order, each with its `type` and `sequence_number`. */
export function responseEvents(reply: WireReply, ctx: WireContext, body: unknown): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [];
  const emit = (event: Record<string, unknown>) => events.push({ ...event, sequence_number: events.length });
  const pending = responseBody(reply, ctx, body, 'in_progress');
  emit({ type: 'response.created', response: pending });
  emit({ type: 'response.in_progress', response: pending });
  responseOutputItems(reply, ctx, body).forEach((item, output_index) => {
    const id = item.id as string;
    if (item.type === 'message') {
      const text = ((item.content as Array<{ text: string }>)[0]?.text ?? '') as string;
      emit({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', content: [] } });
      const part = { type: 'output_text', text: '', annotations: [] };
      emit({ type: 'response.content_part.added', item_id: id, output_index, content_index: 0, part });
      for (const delta of pieces(text, TEXT_PIECE)) {
        emit({ type: 'response.output_text.delta', item_id: id, output_index, content_index: 0, delta, logprobs: [] });
      }
      emit({ type: 'response.output_text.done', item_id: id, output_index, content_index: 0, text, logprobs: [] });
      emit({ type: 'response.content_part.done', item_id: id, output_index, content_index: 0, part: { ...part, text } });
    } else if (item.type === 'function_call') {
      const args = item.arguments as string;
      emit({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of pieces(args, ARGUMENT_PIECE)) {
        emit({ type: 'response.function_call_arguments.delta', item_id: id, output_index, delta });
      }
      emit({ type: 'response.function_call_arguments.done', item_id: id, output_index, arguments: args });
    } else {
      const input = item.input as string;
      emit({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', input: '' } });
      for (const delta of pieces(input, ARGUMENT_PIECE)) {
        emit({ type: 'response.custom_tool_call_input.delta', item_id: id, output_index, delta });
      }
      emit({ type: 'response.custom_tool_call_input.done', item_id: id, output_index, input });
    }
    emit({ type: 'response.output_item.done', output_index, item });
  });
  emit({ type: 'response.completed', response: responseBody(reply, ctx, body) });
  return events;
}

/** OpenAI Responses on `POST /v1/responses` (Codex; Hermes' API server speaks it too). */
export const responsesWire: WireAdapter = {
  name: 'responses',
  path: '/v1/responses',
  toConversation: responsesRequestToConversation,
  isStream: (body) => isPlainObject(body) && body.stream === true,
  replyBody: (reply, ctx, body) => responseBody(reply, ctx, body),
  replyStream(reply, ctx, body) {
    let out = '';
    for (const e of responseEvents(reply, ctx, body)) out += `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`;
    return out;
  },
  errorBody: (message, type, code, param) => ({ error: { message, type, param: param ?? null, code } }),
};
