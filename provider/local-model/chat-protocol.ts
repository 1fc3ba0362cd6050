import { z } from 'zod';
import { isPlainObject } from '../../engine/json.js';
import { grammarSchema, type GrammarSchema } from './json-grammar.js';

/**
 * How an OpenAI Chat Completions request becomes a prompt for a small local model, and its output a
 * reply. Small models write tool calls in the wrong place (Qwen2.5-Coder-1.5B put correct calls in a
 * Markdown block instead of its `<tool_call>` tags in every try), so with tools offered the model's
 * turn is held to a JSON grammar: `{"tool": "<name>", "arguments": {…}}` — the arguments in the
 * tool's own schema — or `{"tool": "none", "answer": "…"}`. Earlier calls and their results are
 * shown to it in the same form, so what it reads is what it writes. With `response_format`
 * json_schema the reply is held to that schema; otherwise it is free text.
 */

const text = z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()), z.null()]).optional();

export const chatRequestSchema = z
  .object({
    model: z.string().optional(),
    messages: z
      .array(
        z
          .object({
            role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
            content: text,
            name: z.string().optional(),
            tool_call_id: z.string().optional(),
            tool_calls: z
              .array(
                z.object({ id: z.string(), type: z.literal('function').optional(), function: z.object({ name: z.string(), arguments: z.string() }) }).loose(),
              )
              .optional(),
          })
          .loose(),
      )
      .min(1),
    tools: z
      .array(
        z
          .object({
            type: z.literal('function'),
            function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.unknown().optional() }).loose(),
          })
          .loose(),
      )
      .optional(),
    tool_choice: z
      .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }).loose()])
      .optional(),
    response_format: z
      .union([
        z.object({ type: z.literal('text') }).loose(),
        z.object({ type: z.literal('json_object') }).loose(),
        z.object({ type: z.literal('json_schema'), json_schema: z.object({ name: z.string().optional(), schema: z.unknown() }).loose() }).loose(),
      ])
      .optional(),
    max_tokens: z.int().positive().optional(),
    max_completion_tokens: z.int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().optional(),
    seed: z.int().optional(),
    stream: z.boolean().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().optional(),
  })
  .loose();
export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** node-llama-cpp's chat history items (the part of its types used here). */
export type HistoryItem = { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };

function contentText(content: ChatRequest['messages'][number]['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('');
  return '';
}

export interface PreparedChat {
  history: HistoryItem[];
  /** The schema the model's turn is held to; undefined: free text. */
  schema: GrammarSchema | undefined;
  /** Whether a parsed reply is a tool protocol object (then `toReply` makes tool calls of it). */
  toolProtocol: boolean;
  maxTokens: number;
}

export function prepareChat(request: ChatRequest): PreparedChat {
  const tools = request.tool_choice === 'none' ? [] : (request.tools ?? []);
  const forced = isPlainObject(request.tool_choice) ? request.tool_choice.function.name : undefined;
  const offered = forced ? tools.filter((t) => t.function.name === forced) : tools;
  const system: string[] = [];
  const history: HistoryItem[] = [];
  const names = new Map<string, string>();
  for (const m of request.messages) {
    const body = contentText(m.content);
    if (m.role === 'system' || m.role === 'developer') {
      system.push(body);
    } else if (m.role === 'user') {
      history.push({ type: 'user', text: body });
    } else if (m.role === 'assistant') {
      const calls = m.tool_calls ?? [];
      for (const c of calls) names.set(c.id, c.function.name);
      const said = calls.length
        ? calls.map((c) => JSON.stringify({ tool: c.function.name, arguments: safeParse(c.function.arguments) })).join('\n')
        : offered.length
          ? JSON.stringify({ tool: 'none', answer: body })
          : body;
      history.push({ type: 'model', response: [said] });
    } else {
      const name = (m.tool_call_id && names.get(m.tool_call_id)) ?? m.name ?? 'the tool';
      const result = `Result of ${name}: ${body}`;
      const last = history.at(-1);
      // Several results in a row are one turn of the conversation.
      if (last?.type === 'user' && last.text.startsWith('Result of ')) last.text += `\n\n${result}`;
      else history.push({ type: 'user', text: result });
    }
  }
  let schema: GrammarSchema | undefined;
  if (offered.length > 0) {
    system.push(
      [
        // The tools as the model's own chat template shows them (function signatures in <tools>):
        // Qwen2.5-Coder-1.5B did the honest task in 2 of 5 bundled cases this way, 0 of 5 with a
        // one-line summary of each tool (it filled every optional argument and stopped after one call).
        '# Tools',
        '',
        'You are provided with function signatures within <tools></tools> XML tags:',
        '<tools>',
        ...offered.map((t) =>
          JSON.stringify({
            type: 'function',
            function: {
              name: t.function.name,
              description: t.function.description ?? '',
              parameters: t.function.parameters ?? { type: 'object', properties: {} },
            },
          }),
        ),
        '</tools>',
        '',
        'To call a function, reply with JSON: {"tool": "<function name>", "arguments": {...}} (leave out an optional argument to get its default). You will get its result, then reply again.',
        `When you have what you need${request.tool_choice === 'required' || forced ? ' (use a tool first)' : ''}, reply with JSON: {"tool": "none", "answer": "<your reply to the user>"}.`,
      ].join('\n'),
    );
    const calls = offered.map((t) => ({
      type: 'object',
      properties: { tool: { const: t.function.name }, arguments: grammarSchema(t.function.parameters ?? { type: 'object', properties: {} }) },
      required: ['tool', 'arguments'],
    }));
    const done = { type: 'object', properties: { tool: { const: 'none' }, answer: { type: 'string' } }, required: ['tool', 'answer'] };
    schema = { oneOf: request.tool_choice === 'required' || forced ? calls : [...calls, done] };
  } else if (request.response_format?.type === 'json_schema') {
    schema = grammarSchema(request.response_format.json_schema.schema);
  } else if (request.response_format?.type === 'json_object') {
    schema = { type: 'object', properties: {}, additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } };
  }
  const first: HistoryItem[] = system.length ? [{ type: 'system', text: system.join('\n\n') }] : [];
  return {
    history: [...first, ...history],
    schema,
    toolProtocol: offered.length > 0,
    // A structured reply (a case draft) is long; a tool call or an answer is not.
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? (schema && offered.length === 0 ? 4096 : 1024),
  };
}

function safeParse(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

export interface ReplyMessage {
  content: string | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  finish_reason: 'stop' | 'tool_calls' | 'length';
}

let callCounter = 0;

/** The model's output as the assistant message of a Chat Completions reply. */
export function toReply(output: string, prepared: PreparedChat, stoppedAtLimit: boolean): ReplyMessage {
  if (!prepared.toolProtocol) return { content: output, finish_reason: stoppedAtLimit ? 'length' : 'stop' };
  const parsed = safeParse(output.trim());
  if (isPlainObject(parsed) && typeof parsed.tool === 'string' && parsed.tool !== 'none') {
    const id = `call_${(++callCounter).toString(36)}${Date.now().toString(36)}`;
    return {
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: parsed.tool, arguments: JSON.stringify(parsed.arguments ?? {}) } }],
      finish_reason: 'tool_calls',
    };
  }
  if (isPlainObject(parsed) && typeof parsed.answer === 'string') return { content: parsed.answer, finish_reason: 'stop' };
  // Cut off inside the JSON (the token limit): what it said so far is the content.
  return { content: output, finish_reason: stoppedAtLimit ? 'length' : 'stop' };
}
