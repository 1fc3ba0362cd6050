import { z } from 'zod';

/**
 * The trajectory's events as a schema: the types the gateway, the adapters and the verifier use
 * are inferred from it, so a stored record and the code that wrote it cannot disagree on what an
 * event is. Only the record loader parses with it; a run builds its events directly (the
 * gateway appends one per tool call, and parsing there would cost every run).
 *
 * Events are in the order they really happened — by `at`, their start — whoever reported them
 * and whenever: an agent's own actions read from its transcript after it exited sit between the
 * gateway calls they came between (engine/trajectory.ts keeps the order).
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
  /** When it was said, ms since the epoch. */
  at: z.number(),
  /**
   * An assistant message said during the turn before its final reply (Codex's intermediate
   * `agent_message` items, Claude Code's text blocks between tool uses). Absent on the reply.
   */
  interim: z.boolean().optional(),
});

export const toolCallEventSchema = z.object({
  type: z.literal('tool_call'),
  seq: z.number().int(),
  turn: z.number().int(),
  /** The trajectory's name for the tool: the gateway's, or the shared name of a native action (`shell`, `write_file`, `http_request`). */
  tool: z.string(),
  /** The agent's own name for the tool when it differs from `tool` (`exec`, `Bash`, `WebFetch`, `mcp__vera__forward_email`). */
  agentTool: z.string().optional(),
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
  /**
   * `gateway`: through the recording MCP gateway (for an attempt: meant for it); `agent`: the
   * agent's own native action.
   */
  origin: z.enum(['gateway', 'agent']),
  /**
   * Set when the gateway refused the call without running it: `budget` (the run's tool-call
   * budget was spent), `late` (the call arrived after the run had ended).
   */
  refused: z.enum(['budget', 'late']).optional(),
  /**
   * Set when the tool use never ran, as the agent's own output reports it: its client blocked it
   * (a permission it lacked, a declined approval) or it failed before reaching the gateway. The
   * verifier's tool-call matchers skip attempts unless they ask for them (`attempted: true`).
   */
  attempted: z.object({ reason: z.string() }).optional(),
  /**
   * Set when the agent's output showed only a preview of the arguments (Hermes' titles cut a
   * command at 80 characters when nothing else carries it): what ran may be longer than `args`.
   */
  argsTruncated: z.boolean().optional(),
  /**
   * How the agent's client ran a native command when it wrapped what the model asked (Codex runs
   * `exec_command {cmd}` as `/bin/bash -lc '<cmd>'`): `args.command` is the model's command, so
   * one verifier matches it under every agent; the wrapper is kept here.
   */
  invocation: z.string().optional(),
  /** When the call started, ms since the epoch. */
  at: z.number(),
  /** How long it ran, as measured by the gateway or reported by the agent (its output's timestamps). */
  durationMs: z.number(),
});

export const trajectoryEventSchema = z.discriminatedUnion('type', [messageEventSchema, toolCallEventSchema]);

export type EgressRecord = z.infer<typeof egressRecordSchema>;
export type MessageEvent = z.infer<typeof messageEventSchema>;
export type ToolCallEvent = z.infer<typeof toolCallEventSchema>;
export type TrajectoryEvent = z.infer<typeof trajectoryEventSchema>;
