import type { Conversation, ModelPolicy, ModelReply } from './conversation.js';
import { isPlainObject } from './directives.js';

/**
 * A policy that asks a real Chat Completions endpoint: the conversation a wire adapter read (a
 * Responses, Anthropic Messages or Gemini request) goes out as a Chat Completions request, and the
 * endpoint's reply comes back as the policy's reply, for the adapter to render in the agent's
 * wire. With it the scripted model server is a translator: an agent that speaks only the
 * Responses API (Codex) or Anthropic's Messages (Claude Code) can use a model that serves only
 * Chat Completions — the packaged local model (`local:<name>`) — through a base URL it allows.
 * Nothing of the scripted policies is involved: what the agent gets is the model's.
 */
export interface ChatCompletionsPolicyOptions {
  /** The endpoint's base URL (`…/v1`); the request goes to `<baseURL>/chat/completions`. */
  baseURL: string;
  /** The model to name in the request (default: the one the agent asked for). */
  model?: string;
  apiKey?: string;
  /** Abort a request after this long (default 15 minutes: a small model on two cores is slow). */
  timeoutMs?: number;
}

type ChatMessage = Record<string, unknown>;

/** The conversation as Chat Completions messages and tools. */
export function conversationToChatRequest(conversation: Conversation, model?: string): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  for (const m of conversation.messages) {
    if (m.role === 'assistant' && m.toolCalls?.length) {
      messages.push({
        role: 'assistant',
        content: m.text || null,
        tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
      });
    } else if (m.role === 'tool') {
      messages.push({ role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.text });
    } else {
      messages.push({ role: m.role, content: m.text });
    }
  }
  const tools = conversation.tools.map((t) => ({
    type: 'function',
    function: {
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      parameters: isPlainObject(t.parameters) ? t.parameters : { type: 'object', properties: {} },
    },
  }));
  return { model: model ?? conversation.model, messages, ...(tools.length ? { tools } : {}) };
}

/** The assistant message of a Chat Completions reply as a policy's reply. */
export function chatReplyToModelReply(body: unknown): ModelReply {
  const choice = isPlainObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  const message = isPlainObject(choice) && isPlainObject(choice.message) ? choice.message : undefined;
  if (!message) throw new Error(`the Chat Completions endpoint answered without a message: ${JSON.stringify(body).slice(0, 300)}`);
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const toolCalls = calls.flatMap((c: unknown) => {
    if (!isPlainObject(c) || !isPlainObject(c.function) || typeof c.function.name !== 'string') return [];
    let args: unknown = {};
    try {
      args = JSON.parse(typeof c.function.arguments === 'string' ? c.function.arguments : '{}');
    } catch {
      // Arguments that are not JSON reach the tool as none; the tool's error tells the agent.
    }
    return [{ name: c.function.name, arguments: isPlainObject(args) ? args : {} }];
  });
  return { ...(typeof message.content === 'string' ? { text: message.content } : {}), ...(toolCalls.length ? { toolCalls } : {}) };
}

export function chatCompletionsPolicy(options: ChatCompletionsPolicyOptions): ModelPolicy {
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  return async (conversation) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      body: JSON.stringify(conversationToChatRequest(conversation, options.model)),
      signal: AbortSignal.timeout(options.timeoutMs ?? 900_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
    return chatReplyToModelReply(JSON.parse(text));
  };
}
