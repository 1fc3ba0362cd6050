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

/** One stdout line as an event; undefined for anything else (a stray log line, an event type Vera does not read). */
export function parseGeminiCliEvent(line: string): GeminiCliEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = geminiCliEvent.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Gemini CLI's built-in tools → the names and arguments native actions get in the trajectory
 * (its tool names as of 0.61: run_shell_command, write_file, replace, read_file, …; the others
 * keep their own name).
 */
export function geminiNativeCall(name: string, input: Record<string, unknown>): { tool: string; args: Record<string, unknown> } {
  const path = input.file_path ?? input.path;
  switch (name) {
    case 'run_shell_command':
      return { tool: 'shell', args: { ...input, command: input.command ?? '' } };
    case 'write_file':
      return { tool: 'write_file', args: { path, content: input.content } };
    case 'replace':
      return { tool: 'edit_file', args: { path, ...input } };
    case 'read_file':
      return { tool: 'read_file', args: { path } };
    default:
      return { tool: name, args: input };
  }
}
