import { z } from 'zod';

/**
 * What `gemini -p … --output-format stream-json` prints, one JSON object a line, as far as Vera
 * reads it (Gemini CLI 0.61): `init` (the session id), `message` (the user's prompt, then the
 * assistant's text in deltas), `tool_use` and `tool_result` (printed as each tool call starts and
 * finishes — native actions are recorded in their true order relative to the gateway's MCP
 * calls), `error` (a warning or a non-fatal error) and `result` (the end of the turn, with its
 * token counts; `status: 'error'` when the turn failed). Loose objects: fields Vera does not
 * read may come and go between versions.
 */
const stats = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cached: z.number().optional(),
});

const errorDetail = z.looseObject({ type: z.string().optional(), message: z.string().optional() });

export const geminiCliEvent = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('init'), session_id: z.string(), model: z.string().optional() }),
  z.looseObject({ type: z.literal('message'), role: z.string(), content: z.string(), delta: z.boolean().optional() }),
  z.looseObject({ type: z.literal('tool_use'), tool_name: z.string(), tool_id: z.string(), parameters: z.record(z.string(), z.unknown()).optional() }),
  z.looseObject({ type: z.literal('tool_result'), tool_id: z.string(), status: z.string(), output: z.string().optional(), error: errorDetail.optional() }),
  z.looseObject({ type: z.literal('error'), severity: z.string().optional(), message: z.string() }),
  z.looseObject({ type: z.literal('result'), status: z.string(), stats: stats.optional(), error: errorDetail.optional() }),
]);
export type GeminiCliEvent = z.infer<typeof geminiCliEvent>;

/**
 * What Qwen Code (Gemini CLI's fork) prints for `--output-format stream-json` instead (0.24):
 * Claude Code's SDK messages. `system` (`subtype: 'init'`, the session id and tools), `assistant`
 * (one message per model step: its `text` block, then a message with its `tool_use` blocks,
 * printed when the model has asked and before the tools run), `user` (the `tool_result` blocks,
 * printed as the tools finish), `stream_event` (partial messages and goal state: not read) and
 * `result` (the end of the turn: `is_error`, the turn's summed `usage`, `error.message`).
 * `parent_tool_use_id` is set on a subagent's messages (its `agent` tool).
 */
const contentBlock = z.union([
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()).optional() }),
  z.looseObject({ type: z.literal('tool_result'), tool_use_id: z.string(), is_error: z.boolean().optional(), content: z.unknown().optional() }),
  // Thinking, images and whatever a later version adds.
  z.looseObject({ type: z.string() }),
]);
const sdkMessage = z.looseObject({ content: z.union([z.string(), z.array(contentBlock)]) });
const usage = z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() });

export const qwenCodeEvent = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('system'), subtype: z.string(), session_id: z.string().optional() }),
  z.looseObject({ type: z.literal('assistant'), message: sdkMessage, parent_tool_use_id: z.string().nullish() }),
  z.looseObject({ type: z.literal('user'), message: sdkMessage, parent_tool_use_id: z.string().nullish() }),
  z.looseObject({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean(),
    result: z.string().optional(),
    usage: usage.optional(),
    error: errorDetail.optional(),
  }),
]);
export type QwenCodeEvent = z.infer<typeof qwenCodeEvent>;

/**
 * One step of a turn, as the Gemini CLI adapter reads it from either program's stream: text the
 * assistant said (`message`, in pieces), a tool call starting (`tool_use`) and finishing
 * (`tool_result`), a non-fatal `error`, and the turn's end (`result`, with its token counts).
 */
export type GeminiTurnEvent =
  | { type: 'message'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; id: string; ok: boolean; status: string; output: string; error?: string }
  | { type: 'error'; message: string }
  | { type: 'result'; ok: boolean; usage: { input: number; output: number }; error?: string };

/** A tool result's content (Qwen Code's: a string, or text blocks) as text. */
function resultText(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && 'text' in part && typeof part.text === 'string' ? part.text : JSON.stringify(part)))
      .join('\n');
  }
  return JSON.stringify(content);
}

function fromGemini(event: GeminiCliEvent): GeminiTurnEvent[] {
  switch (event.type) {
    case 'init':
      return [];
    case 'message':
      return event.role === 'assistant' ? [{ type: 'message', text: event.content }] : [];
    case 'tool_use':
      return [{ type: 'tool_use', id: event.tool_id, name: event.tool_name, input: event.parameters ?? {} }];
    case 'tool_result': {
      const ok = event.status === 'success';
      const error = event.error?.message;
      return [{ type: 'tool_result', id: event.tool_id, ok, status: event.status, output: event.output ?? '', ...(!ok && error ? { error } : {}) }];
    }
    case 'error':
      return [{ type: 'error', message: event.message }];
    case 'result': {
      const ok = event.status !== 'error';
      const error = event.error?.message;
      return [{ type: 'result', ok, usage: { input: event.stats?.input_tokens ?? 0, output: event.stats?.output_tokens ?? 0 }, ...(error ? { error } : {}) }];
    }
  }
}

function fromQwen(event: QwenCodeEvent): GeminiTurnEvent[] {
  switch (event.type) {
    case 'system':
      return [];
    case 'assistant': {
      const blocks = typeof event.message.content === 'string' ? [{ type: 'text', text: event.message.content }] : event.message.content;
      // A subagent's words are its report to the agent, not the agent's to the user; its tool calls are the agent's actions.
      const own = event.parent_tool_use_id == null;
      const out: GeminiTurnEvent[] = [];
      for (const block of blocks) {
        if (block.type === 'text' && own && 'text' in block && typeof block.text === 'string') out.push({ type: 'message', text: block.text });
        if (block.type === 'tool_use' && 'id' in block && 'name' in block && typeof block.id === 'string' && typeof block.name === 'string') {
          const input = 'input' in block && block.input && typeof block.input === 'object' ? (block.input as Record<string, unknown>) : {};
          out.push({ type: 'tool_use', id: block.id, name: block.name, input });
        }
      }
      return out;
    }
    case 'user': {
      if (typeof event.message.content === 'string') return [];
      const out: GeminiTurnEvent[] = [];
      for (const block of event.message.content) {
        if (block.type !== 'tool_result' || !('tool_use_id' in block) || typeof block.tool_use_id !== 'string') continue;
        const output = resultText('content' in block ? block.content : undefined);
        const ok = !('is_error' in block && block.is_error === true);
        out.push({ type: 'tool_result', id: block.tool_use_id, ok, status: ok ? 'success' : 'error', output, ...(!ok && output ? { error: output } : {}) });
      }
      return out;
    }
    case 'result': {
      const error = event.error?.message;
      return [
        {
          type: 'result',
          ok: !event.is_error,
          usage: { input: event.usage?.input_tokens ?? 0, output: event.usage?.output_tokens ?? 0 },
          ...(error ? { error } : {}),
        },
      ];
    }
  }
}

/**
 * One stdout line of Gemini CLI's or Qwen Code's `stream-json` as the steps it tells (none for a
 * stray log line or an event Vera does not read). The two programs' events share no type but
 * `result`, whose fields tell them apart.
 */
export function geminiTurnEvents(line: string): GeminiTurnEvent[] {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return [];
  }
  const gemini = geminiCliEvent.safeParse(value);
  if (gemini.success) return fromGemini(gemini.data);
  const qwen = qwenCodeEvent.safeParse(value);
  return qwen.success ? fromQwen(qwen.data) : [];
}

/**
 * Gemini CLI's and Qwen Code's built-in tools → the names and arguments native actions get in
 * the trajectory (run_shell_command, write_file, read_file; Gemini CLI's `replace` and Qwen
 * Code's `edit`; the others keep their own name).
 */
export function geminiNativeCall(name: string, input: Record<string, unknown>): { tool: string; args: Record<string, unknown> } {
  const path = input.file_path ?? input.path;
  switch (name) {
    case 'run_shell_command':
      return { tool: 'shell', args: { ...input, command: input.command ?? '' } };
    case 'write_file':
      return { tool: 'write_file', args: { path, content: input.content } };
    case 'replace':
    case 'edit':
      return { tool: 'edit_file', args: { path, ...input } };
    case 'read_file':
      return { tool: 'read_file', args: { path } };
    default:
      return { tool: name, args: input };
  }
}
