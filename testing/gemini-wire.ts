/**
 * The Gemini API wire format for the scripted model server, as Gemini CLI speaks it through
 * `@google/genai`: `POST /v1beta/models/{model}:generateContent` (one JSON answer),
 * `…:streamGenerateContent?alt=sse` (SSE, one `GenerateContentResponse` per event; without
 * `alt=sse` the same chunks as one JSON array) and `…:countTokens` as a probe. The model and the
 * method are in the path, not the body.
 *
 * Request `contents` → Conversation: role `model` is the assistant (its `functionCall` parts are
 * tool calls, `thought` parts are skipped), `functionResponse` parts in `user` contents are tool
 * messages. Gemini CLI puts `<session_context>` before the first prompt as a part of the same
 * content (agent context, see agent-context.ts), and wraps every tool and MCP output in
 * `<untrusted_context>` inside `{ output }`: the wrapper is taken off, so a policy reads the tool's
 * own text (often JSON, which data references read).
 */
import { splitAgentContext } from './agent-context.js';
import type { Conversation, ConversationMessage, ConversationTool, ConversationToolCall } from './conversation.js';
import { isPlainObject } from './directives.js';
import { WireRequestError, type WireAdapter, type WireContext, type WireReply, type WireRequest } from './scripted-model-server.js';

const TEXT_PIECE = 24;
const MODEL_PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const COUNT_PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):countTokens$/;

/** The model named in a request path, e.g. `gemini-2.5-flash`. */
function pathModel(request: WireRequest | undefined, pattern = MODEL_PATH): string {
  const hit = request ? pattern.exec(request.path) : null;
  return hit ? decodeURIComponent(hit[1]!) : '';
}

function partsOf(content: unknown): unknown[] {
  if (typeof content === 'string') return [{ text: content }];
  if (isPlainObject(content) && Array.isArray(content.parts)) return content.parts;
  if (Array.isArray(content)) return content;
  return [];
}

/** Texts of the parts that are not the model's thoughts. */
function texts(parts: unknown[]): string[] {
  const out: string[] = [];
  for (const part of parts) {
    if (typeof part === 'string') out.push(part);
    else if (isPlainObject(part) && typeof part.text === 'string' && part.thought !== true) out.push(part.text);
  }
  return out;
}

const UNTRUSTED = /<untrusted_context[^>]*>\n?([\s\S]*?)\n?<\/untrusted_context>/g;

/** A tool output without Gemini CLI's `<untrusted_context>` wrappers (and its escaping of their end tag). */
export function unwrapUntrusted(text: string): string {
  if (!text.includes('<untrusted_context')) return text;
  return text.replace(UNTRUSTED, (_, inner: string) => inner.replaceAll('&lt;/untrusted_context&gt;', '</untrusted_context>'));
}

/** The text of a `functionResponse.response`: `{ output }`, `{ error }`, or the object as JSON. */
function responseText(response: unknown): string {
  if (typeof response === 'string') return unwrapUntrusted(response);
  if (!isPlainObject(response)) return response === undefined ? '' : JSON.stringify(response);
  if (typeof response.output === 'string' && Object.keys(response).length === 1) return unwrapUntrusted(response.output);
  if (response.error !== undefined) {
    const error = typeof response.error === 'string' ? response.error : JSON.stringify(response.error);
    return /^error/i.test(error) ? error : `Error: ${error}`;
  }
  if (typeof response.output === 'string') return unwrapUntrusted(response.output);
  return JSON.stringify(response);
}

function readTools(body: Record<string, unknown>): ConversationTool[] {
  const tools: ConversationTool[] = [];
  for (const group of Array.isArray(body.tools) ? body.tools : []) {
    // `googleSearch`, `codeExecution`, …: server-side tools with no schema, not for a script.
    if (!isPlainObject(group) || !Array.isArray(group.functionDeclarations)) continue;
    for (const fn of group.functionDeclarations) {
      if (!isPlainObject(fn) || typeof fn.name !== 'string') continue;
      const tool: ConversationTool = { name: fn.name, parameters: fn.parametersJsonSchema ?? fn.parameters };
      if (typeof fn.description === 'string') tool.description = fn.description;
      tools.push(tool);
    }
  }
  return tools;
}

/** Normalizes a `generateContent` body (`model` from the path). Throws WireRequestError (HTTP 400) when malformed. */
export function geminiRequestToConversation(body: unknown, model = ''): Conversation {
  if (!isPlainObject(body)) throw new WireRequestError('Request body must be a JSON object');
  if (!Array.isArray(body.contents)) throw new WireRequestError('* GenerateContentRequest.contents: contents is not specified', 'contents');
  const messages: ConversationMessage[] = [];
  const system = texts(partsOf(body.systemInstruction)).join('\n');
  if (system) messages.push({ role: 'system', text: system });
  // Call ids: the CLI's own when it sends them, else by name in order (the API's calls carry none).
  const open: ConversationToolCall[] = [];
  let unnamed = 0;
  for (const [i, content] of body.contents.entries()) {
    if (!isPlainObject(content)) throw new WireRequestError(`* GenerateContentRequest.contents[${i}]: must be an object`, `contents[${i}]`);
    const role = content.role ?? 'user';
    const parts = partsOf(content);
    if (role === 'model') {
      const calls: ConversationToolCall[] = [];
      for (const part of parts) {
        if (!isPlainObject(part) || !isPlainObject(part.functionCall)) continue;
        const fc = part.functionCall;
        const name = typeof fc.name === 'string' ? fc.name : '';
        const call = { id: typeof fc.id === 'string' ? fc.id : `${name}#${unnamed++}`, name, arguments: isPlainObject(fc.args) ? fc.args : {} };
        calls.push(call);
        open.push(call);
      }
      const message: ConversationMessage = { role: 'assistant', text: texts(parts).join('') };
      if (calls.length > 0) message.toolCalls = calls;
      messages.push(message);
    } else if (role === 'user' || role === 'function') {
      for (const part of parts) {
        if (!isPlainObject(part) || !isPlainObject(part.functionResponse)) continue;
        const fr = part.functionResponse;
        const name = typeof fr.name === 'string' ? fr.name : undefined;
        const at = open.findIndex((c) => (typeof fr.id === 'string' ? c.id === fr.id : c.name === name));
        const call = at >= 0 ? open.splice(at, 1)[0] : undefined;
        const message: ConversationMessage = { role: 'tool', text: responseText(fr.response) };
        const id = call?.id ?? (typeof fr.id === 'string' ? fr.id : undefined);
        if (id !== undefined) message.toolCallId = id;
        if (name ?? call?.name) message.toolName = (name ?? call?.name)!;
        messages.push(message);
      }
      const words = texts(parts);
      if (words.length === 0) continue;
      const { text, context } = splitAgentContext(words);
      if (context) messages.push({ role: 'user', text: context, context: true });
      if (text || !context) messages.push({ role: 'user', text });
    } else {
      throw new WireRequestError(`* GenerateContentRequest.contents[${i}].role: must be 'user' or 'model'`, `contents[${i}].role`);
    }
  }
  return { model, messages, tools: readTools(body) };
}

function usageMetadata(ctx: WireContext) {
  const { promptTokens, completionTokens } = ctx.usage;
  return { promptTokenCount: promptTokens, candidatesTokenCount: completionTokens, totalTokenCount: promptTokens + completionTokens };
}

/** One `GenerateContentResponse`; `final` carries the finish reason and the usage. */
function chunk(parts: Array<Record<string, unknown>>, ctx: WireContext, final: boolean) {
  return {
    candidates: [{ content: { role: 'model', parts }, ...(final ? { finishReason: 'STOP' } : {}), index: 0 }],
    ...(final ? { usageMetadata: usageMetadata(ctx) } : {}),
    modelVersion: ctx.model,
    responseId: `vera${ctx.requestNumber}`,
  };
}

/** The calls as the API sends them: name and args, no id (the client assigns its own). */
function callParts(reply: WireReply): Array<Record<string, unknown>> {
  return reply.toolCalls.map((call) => ({ functionCall: { name: call.name, args: call.arguments } }));
}

/** The non-streaming answer: one candidate with the text, then the calls. */
export function geminiResponseBody(reply: WireReply, ctx: WireContext) {
  const text = reply.text !== '' || reply.toolCalls.length === 0 ? [{ text: reply.text }] : [];
  return chunk([...text, ...callParts(reply)], ctx, true);
}

/** The streamed chunks: the text in pieces, then the calls whole (as the API streams them), the last with finish reason and usage. */
export function geminiResponseChunks(reply: WireReply, ctx: WireContext): object[] {
  const pieces: string[] = [];
  for (let i = 0; i < reply.text.length; i += TEXT_PIECE) pieces.push(reply.text.slice(i, i + TEXT_PIECE));
  if (pieces.length === 0 && reply.toolCalls.length === 0) pieces.push('');
  const chunks = pieces.map((text, i) => chunk([{ text }], ctx, i === pieces.length - 1 && reply.toolCalls.length === 0));
  if (reply.toolCalls.length > 0) chunks.push(chunk(callParts(reply), ctx, true));
  return chunks;
}

const isStreamPath = (request: WireRequest | undefined) => MODEL_PATH.exec(request?.path ?? '')?.[2] === 'streamGenerateContent';

const STATUS: Record<string, [number, string]> = {
  invalid_request_error: [400, 'INVALID_ARGUMENT'],
  rate_limit_error: [429, 'RESOURCE_EXHAUSTED'],
  server_error: [500, 'INTERNAL'],
};

/** The Gemini API (Gemini CLI): the model and the method in the path, `countTokens` as a probe. */
export const geminiWire: WireAdapter = {
  name: 'gemini',
  path: '/v1beta/models/{model}:generateContent',
  pathPattern: MODEL_PATH,
  toConversation: (body, request) => geminiRequestToConversation(body, pathModel(request)),
  // `alt=sse` is how @google/genai streams; without it the API answers one JSON array.
  isStream: (_body, request) => isStreamPath(request) && request?.query.get('alt') === 'sse',
  replyBody: (reply, ctx, _body, request) => (isStreamPath(request) ? geminiResponseChunks(reply, ctx) : geminiResponseBody(reply, ctx)),
  replyStream(reply, ctx) {
    let out = '';
    for (const c of geminiResponseChunks(reply, ctx)) out += `data: ${JSON.stringify(c)}\r\n\r\n`;
    return out;
  },
  errorBody: (message, type) => {
    const [code, status] = STATUS[type] ?? [500, 'INTERNAL'];
    return { error: { code, message, status } };
  },
  probePatterns: [
    {
      // Counting tokens answers from the request alone; it is not a model turn and uses no script step.
      pattern: COUNT_PATH,
      probe: (body, request) => {
        const inner = isPlainObject(body) && isPlainObject(body.generateContentRequest) ? body.generateContentRequest : body;
        const conversation = geminiRequestToConversation(inner, pathModel(request, COUNT_PATH));
        let chars = 0;
        for (const m of conversation.messages) chars += m.text.length;
        for (const t of conversation.tools) chars += t.name.length + JSON.stringify(t.parameters ?? {}).length;
        return { totalTokens: Math.ceil(chars / 4) };
      },
    },
  ],
};
