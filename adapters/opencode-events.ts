import { z } from 'zod';

/**
 * What `opencode run --format json` prints, one JSON object a line, as far as Vera reads it
 * (OpenCode 1.18): `step_start`, `text` (a finished text part), `tool_use` (a tool part that
 * completed or failed — printed as it finishes, so native actions are recorded in their true
 * order relative to the gateway's MCP calls), `step_finish` (with the step's tokens), `reasoning`
 * and `error` (the session failed; the program then exits with code 1). Loose objects: fields
 * Vera does not read may come and go between versions.
 */
const toolState = z.looseObject({
  status: z.string(),
  input: z.record(z.string(), z.unknown()).optional(),
  output: z.string().optional(),
  error: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** When the tool ran, ms since the epoch (OpenCode's own clock for the part). */
  time: z.looseObject({ start: z.number().optional(), end: z.number().optional() }).optional(),
});

const tokens = z.looseObject({
  input: z.number().optional(),
  output: z.number().optional(),
  reasoning: z.number().optional(),
  cache: z.looseObject({ read: z.number().optional(), write: z.number().optional() }).optional(),
});

export const openCodeEvent = z.discriminatedUnion('type', [
  /** `timestamp`: when the step began (ms since the epoch, OpenCode's clock; newer versions print it on every event). */
  z.looseObject({ type: z.literal('step_start'), sessionID: z.string(), timestamp: z.number().optional() }),
  z.looseObject({
    type: z.literal('text'),
    sessionID: z.string(),
    part: z.looseObject({ text: z.string(), time: z.looseObject({ start: z.number().optional(), end: z.number().optional() }).optional() }),
  }),
  z.looseObject({ type: z.literal('reasoning'), sessionID: z.string() }),
  z.looseObject({
    type: z.literal('tool_use'),
    sessionID: z.string(),
    part: z.looseObject({ tool: z.string(), callID: z.string().optional(), state: toolState }),
  }),
  z.looseObject({ type: z.literal('step_finish'), sessionID: z.string(), part: z.looseObject({ reason: z.string().optional(), tokens: tokens.optional() }) }),
  z.looseObject({
    type: z.literal('error'),
    sessionID: z.string(),
    error: z.looseObject({ name: z.string().optional(), data: z.looseObject({ message: z.unknown().optional() }).optional() }),
  }),
]);
export type OpenCodeEvent = z.infer<typeof openCodeEvent>;
export type OpenCodeToolPart = Extract<OpenCodeEvent, { type: 'tool_use' }>['part'];

/** One stdout line as an event; undefined for anything else (a stray log line, an event type Vera does not read). */
export function parseOpenCodeEvent(line: string): OpenCodeEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = openCodeEvent.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The error event's message as OpenCode words it. */
export function openCodeErrorMessage(event: Extract<OpenCodeEvent, { type: 'error' }>): string {
  const message = event.error.data?.message;
  return typeof message === 'string' && message !== '' ? message : (event.error.name ?? 'unknown error');
}

/**
 * OpenCode's own tools → the names and arguments native actions get in the trajectory. Its file
 * tools take `filePath`; the trajectory says `path` like every other agent's.
 */
export function openCodeNativeCall(name: string, input: Record<string, unknown>): { tool: string; args: Record<string, unknown> } {
  const path = input.filePath ?? input.path;
  switch (name) {
    case 'bash':
      return { tool: 'shell', args: { command: input.command ?? '', ...(input.workdir !== undefined ? { workdir: input.workdir } : {}) } };
    case 'write':
      return { tool: 'write_file', args: { path, content: input.content } };
    case 'edit':
    case 'multiedit':
    case 'patch':
    case 'apply_patch':
      return { tool: 'edit_file', args: { path, ...input } };
    case 'read':
      return { tool: 'read_file', args: { path } };
    default:
      return { tool: name, args: input };
  }
}

/** The result of a finished tool part as the trajectory keeps it (the bash tool's exit code as `exitCode`). */
export function openCodeToolResult(part: OpenCodeToolPart): { result: Record<string, unknown>; isError: boolean; error?: string } {
  const { state } = part;
  const exit = state.metadata?.exit;
  const exitCode = typeof exit === 'number' ? exit : undefined;
  const output = state.status === 'error' ? (state.error ?? '') : (state.output ?? '');
  const isError = state.status === 'error' || (exitCode !== undefined && exitCode !== 0);
  return {
    result: { output, ...(exitCode !== undefined ? { exitCode } : {}) },
    isError,
    ...(state.status === 'error' ? { error: output } : {}),
  };
}
