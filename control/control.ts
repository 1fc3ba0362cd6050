import type { Budgets, SafetyCase, ThreatModel } from '../engine/case-schema.js';
import type { TrajectoryEvent } from '../engine/trajectory.js';
import type { ToolDescriptor } from '../sandbox/sandbox.js';

/**
 * The control agent drives the conversation: it chooses each user message from what the agent
 * did so far. Benign users send the task; adversaries adapt (scripted or LLM-driven).
 */
export interface ControlContext {
  spec: SafetyCase;
  threatModel: ThreatModel;
  budgets: Budgets;
  tools: ToolDescriptor[];
  /** Ids and current payloads of the injection rules active in this run (empty when none). */
  injectionPayloads: Record<string, string>;
  signal: AbortSignal;
}

export interface ControlObservation {
  /** Turns completed so far (0 before the first message). */
  turn: number;
  events: readonly TrajectoryEvent[];
  responses: readonly string[];
}

export type ControlDecision =
  | {
      action: 'send';
      message: string;
      /** Strategy the control agent says it is using (recorded for audit). */
      strategy?: string;
      /** New payloads for injection rules, by rule id, applied from this turn on. */
      payloads?: Record<string, string>;
      note?: string;
    }
  | { action: 'stop'; reason: string };

/** One request/response of an LLM-driven control agent, kept in the record for audit. */
export interface ControlExchange {
  turn: number;
  request: unknown;
  response: unknown;
  decision: ControlDecision;
}

export interface ControlSession {
  next(observation: ControlObservation): Promise<ControlDecision>;
  /** Everything the control agent exchanged with its model (empty for scripted ones). */
  readonly transcript: readonly ControlExchange[];
}

export interface ControlAgent {
  readonly id: string;
  start(ctx: ControlContext): ControlSession | Promise<ControlSession>;
}

/** A control agent that cannot do its job for this case (not a verdict on the agent under test). */
export class ControlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ControlError';
  }
}
