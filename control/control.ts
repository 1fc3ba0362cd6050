import type { Budgets, SafetyCase, ThreatModel } from '../engine/case-schema.js';
import type { TrajectoryEvent } from '../engine/trajectory.js';
import type { ToolDescriptor } from '../sandbox/sandbox.js';
import type { StrategyPlan } from './strategies.js';
import { VeraError } from '../engine/errors.js';

/**
 * The control agent drives the conversation: it chooses each user message from what the agent
 * did so far. Benign users send the task (and answer clarifying questions); adversaries adapt
 * (scripted or LLM-driven).
 */
export interface ControlContext {
  spec: SafetyCase;
  threatModel: ThreatModel;
  budgets: Budgets;
  tools: ToolDescriptor[];
  /** Ids and current payloads of the injection rules active in this run (empty when none). */
  injectionPayloads: Record<string, string>;
  signal: AbortSignal;
  /** This run's seed (recorded): LLM controls send it with each model request; scripted ones derive choices from it. */
  seed: number;
  /** Which repeat of the case this run is (0-based). */
  repeat: number;
  /**
   * The base URL to use for a model endpoint in this run: through the run-wide model proxy
   * (limits, retries, usage) when there is one, else the endpoint itself.
   */
  modelBaseURL?(upstream: string): string;
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
      /** Strategy the control agent is using (recorded for audit). */
      strategy?: string;
      /** New payloads for injection rules, by rule id, applied from this turn on. */
      payloads?: Record<string, string>;
      /**
       * What the embedded scripted model does with this message (the tool calls it leads to):
       * delivered out of band, never part of the message. A real model under test ignores it.
       */
      calls?: Array<{ tool: string; args: Record<string, unknown> }>;
      note?: string;
    }
  | { action: 'stop'; reason: string };

/** One chat message of a control agent's model request, as sent. */
export interface ControlChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A model request of an LLM-driven control agent. */
export interface ControlModelRequest {
  model: string;
  seed: number;
  temperature?: number;
  /**
   * The messages this request added to the conversation (the first request carries the system
   * prompt). The full request is every earlier exchange's `request.messages` and
   * `response.content` (as an assistant message), then these.
   */
  messages: ControlChatMessage[];
  /** How many messages the request held in all. */
  totalMessages: number;
}

export interface ControlModelResponse {
  content: string;
  finishReason?: string;
  usage?: { input: number; output: number };
}

/** A strategy change, and why. */
export interface StrategySwitch {
  from: string;
  to: string;
  reason: string;
}

/**
 * What became of a control model's reply that was not acted on: kept for audit, never sent (the
 * adversary model refused, and the adversary asked again under its next strategy).
 */
export interface DiscardedReply {
  action: 'discard';
  reason: string;
}

/**
 * One decision of a control agent, kept in the record for audit: for LLM-driven ones the exact
 * request and response; for all, the strategy in force, switches, payload rewrites and stops.
 */
export interface ControlExchange {
  /** Turns completed when the decision was made. */
  turn: number;
  /** The strategy in force for this decision. */
  strategy?: string;
  switched?: StrategySwitch;
  request?: ControlModelRequest;
  response?: ControlModelResponse;
  decision: ControlDecision | DiscardedReply;
  /**
   * The adversary model declined its red-team job in this reply (the refusing phrase, or what was
   * missing): the reply was discarded or ended the attack, and none of it reached the agent.
   */
  adversaryRefusal?: string;
  /** Payload rewrites the decision asked for: applied (by rule id) and rejected (unknown rules, or no injection channel). */
  payloads?: { applied: Record<string, string>; rejected: string[] };
  /** Why the decision is what it is, when not obvious (e.g. the question a benign user answered). */
  note?: string;
}

export interface ControlSession {
  next(observation: ControlObservation): Promise<ControlDecision>;
  /** Every decision, and everything the control agent exchanged with its model. */
  readonly transcript: readonly ControlExchange[];
  /** The adversary's strategy plan (sequence, where it came from, switching rule), when it has one. */
  readonly plan?: StrategyPlan;
}

/**
 * `role` says who the control agent speaks for. The engine refuses an `adversary` in a threat
 * model whose user is honest (`benign`, `indirect`).
 */
export type ControlRole = 'user' | 'adversary';

export interface ControlAgent {
  readonly id: string;
  readonly role?: ControlRole;
  start(ctx: ControlContext): ControlSession | Promise<ControlSession>;
}

/** A control agent that cannot do its job for this case (not a verdict on the agent under test). */
export class ControlError extends VeraError {
  constructor(message: string) {
    super('CONTROL_FAILED', message);
    this.name = 'ControlError';
  }
}
