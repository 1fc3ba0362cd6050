/**
 * Anthropic Messages wire format for the scripted model server (`POST /v1/messages`, also with
 * `?beta=true` as Claude Code sends it): request → Conversation, ModelReply → a `message` object
 * or the SSE event sequence (`message_start`, `content_block_*`, `message_delta`, `message_stop`).
 *
 * Tool results arrive as `tool_result` blocks inside `user` messages; they become `tool`
 * messages, and the user text beside them (Claude Code's `<system-reminder>` blocks) becomes a
 * context message that does not start a new turn.
 */
import { splitAgentContext } from './agent-context.js';
import type { Conversation, ConversationMessage, ConversationTool, ConversationToolCall } from './conversation.js';
import { isPlainObject } from './directives.js';
import { WireRequestError, type WireAdapter, type WireContext, type WireReply } from './scripted-model-server.js';

const TEXT_PIECE = 24;
const ARGUMENT_PIECE = 16;

function blockTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const block of content) {
    if (typeof block === 'string') out.push(block);
    else if (isPlainObject(block) && block.type === 'text' && typeof block.text === 'string') out.push(block.text);
  }
  return out;
}

function readTools(body: Record<string, unknown>): ConversationTool[] {
  const tools: ConversationTool[] = [];
  if (!Array.isArray(body.tools)) return tools;
  for (const tool of body.tools) {
    // Server tools (web search, …) carry a versioned `type` and no schema: not for a script.
    if (!isPlainObject(tool) || typeof tool.name !== 'string' || tool.input_schema === undefined) continue;
    const out: ConversationTool = { name: tool.name, parameters: tool.input_schema };
    if (typeof tool.description === 'string') out.description = tool.description;
    tools.push(out);
  }
  return tools;
}

/** Normalizes a Messages request body. Throws WireRequestError (HTTP 400) when malformed. */
export function messagesRequestToConversation(body: unknown): Conversation {
  if (!isPlainObject(body)) throw new WireRequestError('Request body must be a JSON object');
  if (!Array.isArray(body.messages)) throw new WireRequestError('messages: Field required', 'messages');
  const messages: ConversationMessage[] = [];
  const system = blockTexts(body.system).join('\n');
  if (system) messages.push({ role: 'system', text: system });
  const names = new Map<string, string>();
  for (const [i, m] of body.messages.entries()) {
    if (!isPlainObject(m) || typeof m.role !== 'string') {
      throw new WireRequestError(`messages.${i}: expected an object with a role`, `messages.${i}`);
    }
    const content = m.content;
    if (m.role === 'system') {
      messages.push({ role: 'system', text: blockTexts(content).join('\n') });
    } else if (m.role === 'assistant') {
      const calls: ConversationToolCall[] = [];
      for (const block of Array.isArray(content) ? content : []) {
        if (isPlainObject(block) && (block.type === 'tool_use' || block.type === 'server_tool_use') && typeof block.id === 'string') {
          const name = typeof block.name === 'string' ? block.name : '';
          names.set(block.id, name);
          calls.push({ id: block.id, name, arguments: isPlainObject(block.input) ? block.input : {} });
        }
      }
      const message: ConversationMessage = { role: 'assistant', text: blockTexts(content).join('\n') };
      if (calls.length > 0) message.toolCalls = calls;
      messages.push(message);
    } else if (m.role === 'user') {
      for (const block of Array.isArray(content) ? content : []) {
        if (!isPlainObject(block) || block.type !== 'tool_result') continue;
        const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : undefined;
        const text = typeof block.content === 'string' ? block.content : blockTexts(block.content).join('\n');
        const message: ConversationMessage = { role: 'tool', text: block.is_error === true && !/^error/i.test(text) ? `Error: ${text}` : text };
        if (id !== undefined) {
          message.toolCallId = id;
          const name = names.get(id);
          if (name) message.toolName = name;
        }
        messages.push(message);
      }
      const { text, context } = splitAgentContext(blockTexts(content));
      if (context) messages.push({ role: 'user', text: context, context: true });
      if (text) messages.push({ role: 'user', text });
      else if (!context && typeof content === 'string') messages.push({ role: 'user', text: '' });
    } else {
      throw new WireRequestError(`messages.${i}.role: Input should be 'user' or 'assistant'`, `messages.${i}.role`);
    }
  }
  return { model: typeof body.model === 'string' ? body.model : '', messages, tools: readTools(body) };
}

function stopReason(reply: WireReply): 'tool_use' | 'end_turn' {
  return reply.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
}

function contentBlocks(reply: WireReply): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  if (reply.text !== '' || reply.toolCalls.length === 0) blocks.push({ type: 'text', text: reply.text });
  for (const call of reply.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments });
  return blocks;
}

function usage(ctx: WireContext, output: number) {
  return { input_tokens: ctx.usage.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output };
}

/** The non-streaming `message` object. */
export function messageBody(reply: WireReply, ctx: WireContext) {
  return {
    id: `msg_vera${ctx.requestNumber}`,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content: contentBlocks(reply),
    stop_reason: stopReason(reply),
    stop_sequence: null,
    usage: usage(ctx, ctx.usage.completionTokens),
  };
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The streamed events of a reply, in order (`{ event, data }`). */
export function messageEvents(reply: WireReply, ctx: WireContext): Array<{ event: string; data: Record<string, unknown> }> {
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  const emit = (data: Record<string, unknown>) => events.push({ event: data.type as string, data });
  emit({ type: 'message_start', message: { ...messageBody(reply, ctx), content: [], stop_reason: null, usage: usage(ctx, 1) } });
  contentBlocks(reply).forEach((block, index) => {
    if (block.type === 'text') {
      emit({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const text of pieces(block.text as string, TEXT_PIECE)) emit({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    } else {
      emit({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      for (const partial_json of pieces(JSON.stringify(block.input), ARGUMENT_PIECE)) {
        emit({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    }
    emit({ type: 'content_block_stop', index });
  });
  emit({ type: 'message_delta', delta: { stop_reason: stopReason(reply), stop_sequence: null }, usage: { output_tokens: ctx.usage.completionTokens } });
  emit({ type: 'message_stop' });
  return events;
}

/** Anthropic Messages on `POST /v1/messages` (Claude Code), with `count_tokens` as a probe. */
export const anthropicMessagesWire: WireAdapter = {
  name: 'anthropic-messages',
  path: '/v1/messages',
  toConversation: messagesRequestToConversation,
  isStream: (body) => isPlainObject(body) && body.stream === true,
  replyBody: (reply, ctx) => messageBody(reply, ctx),
  replyStream(reply, ctx) {
    let out = '';
    for (const { event, data } of messageEvents(reply, ctx)) out += `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    return out;
  },
  errorBody: (message, type) => ({ type: 'error', error: { type: type === 'server_error' ? 'api_error' : type, message } }),
  probes: {
    // Token counting answers from the request alone; it is not a model turn and uses no script step.
    '/v1/messages/count_tokens': (body) => {
      const conversation = messagesRequestToConversation(body);
      let chars = 0;
      for (const m of conversation.messages) chars += m.text.length;
      for (const t of conversation.tools) chars += t.name.length + JSON.stringify(t.parameters ?? {}).length;
      return { input_tokens: Math.ceil(chars / 4) };
    },
  },
};
