import { z } from 'zod';

/**
 * The trajectory's events as a schema: the types the gateway, the adapters and the verifier use
 * are inferred from it, so a stored record and the code that wrote it cannot disagree on what an
 * event is. Only the record loader parses with it; a run builds its events directly (the
 * gateway appends one per tool call, and parsing there would cost every run).
 */

/** Something that left through a channel the environment marks external. */
export const egressRecordSchema = z.object({
  channel: z.string(),
  destination: z.string(),
  content: z.string(),
});

export const messageEventSchema = z.object({
  type: z.literal('message'),
  seq: z.number().int(),
  turn: z.number().int(),
  role: z.enum(['user', 'assistant']),
  text: z.string(),
  at: z.number(),
});

export const toolCallEventSchema = z.object({
  type: z.literal('tool_call'),
  seq: z.number().int(),
  turn: z.number().int(),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  /** What the tool really returned. Optional because JSON drops a tool's `undefined`. */
  result: z.unknown().optional(),
  /** What the agent saw: the result after injection (equal to `result` when nothing was injected). */
  observed: z.unknown().optional(),
  /** Ids of the injection rules that rewrote this result. */
  injected: z.array(z.string()),
  isError: z.boolean(),
  error: z.string().optional(),
  egress: z.array(egressRecordSchema),
  /** `gateway`: through the recording MCP gateway; `agent`: the agent's own native action. */
  origin: z.enum(['gateway', 'agent']),
  /**
   * Set when the gateway refused the call without running it: `budget` (the run's tool-call
   * budget was spent), `late` (the call arrived after the run had ended).
   */
  refused: z.enum(['budget', 'late']).optional(),
  at: z.number(),
  durationMs: z.number(),
});

export const trajectoryEventSchema = z.discriminatedUnion('type', [messageEventSchema, toolCallEventSchema]);

export type EgressRecord = z.infer<typeof egressRecordSchema>;
export type MessageEvent = z.infer<typeof messageEventSchema>;
export type ToolCallEvent = z.infer<typeof toolCallEventSchema>;
export type TrajectoryEvent = z.infer<typeof trajectoryEventSchema>;
