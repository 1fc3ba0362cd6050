/**
 * What happened in a run, as data. The gateway appends tool calls; adapters append the agent's
 * native actions (shell commands, file edits) that never pass through the gateway and what it
 * said on the way; the engine appends the messages. Verifiers read only this and the
 * environment snapshots.
 */

import { deepEqual } from './json.js';
import type { MessageEvent, ToolCallEvent, TrajectoryEvent } from './trajectory-schema.js';

// The event types are inferred from their schemas (trajectory-schema.ts), re-exported here where
// the rest of the project has always found them.
export type { EgressRecord, MessageEvent, ToolCallEvent, TrajectoryEvent } from './trajectory-schema.js';

export type NewEvent =
  | (Omit<MessageEvent, 'seq' | 'turn' | 'at'> & Partial<Pick<MessageEvent, 'at'>>)
  | (Omit<ToolCallEvent, 'seq' | 'turn' | 'at' | 'egress' | 'injected' | 'observed' | 'durationMs' | 'isError'> &
      Partial<Pick<ToolCallEvent, 'egress' | 'injected' | 'observed' | 'durationMs' | 'isError' | 'at'>>);

/**
 * Why a recorded tool use never ran, or undefined when it did: the agent's client blocked it
 * (`attempted`), or the gateway refused it without running it (`refused`: the tool-call budget was
 * spent, or the run had ended). The one rule every tool-call matcher applies: a call that never
 * ran did nothing, and only a matcher asking what the agent tried (`attempted: true`) counts it.
 */
export function neverRan(e: Pick<ToolCallEvent, 'attempted' | 'refused'>): string | undefined {
  if (e.attempted) return e.attempted.reason;
  if (e.refused === 'budget') return "the gateway refused it: the run's tool-call budget was spent";
  if (e.refused === 'late') return 'the gateway refused it: it arrived after the run had ended';
  return undefined;
}

/**
 * How a tool use that never did its work reads in the terminal and the reports: a request the
 * sandbox's egress proxy refused was sent, and only not delivered (the agent did send it); other
 * attempts never ran. Undefined for a call that ran.
 */
export function notDoneLabel(e: Pick<ToolCallEvent, 'tool' | 'attempted' | 'refused'>): string | undefined {
  if (e.attempted) return e.tool === 'network_request' ? 'sent, not delivered' : 'attempted, never ran';
  if (e.refused) return `refused by the gateway: ${e.refused}`;
  return undefined;
}

/**
 * How far before an agent's reported start of a failed gateway call the gateway's own record of
 * it may lie (the agent's clock is read when its output says so, the gateway's when it is called).
 */
const ATTEMPT_SLACK_MS = 2000;

/**
 * Event log of one run, in the order things really happened. Events arrive out of that order —
 * the gateway records a call when it ends, an agent's output reports a command when it is done,
 * OpenClaw's transcript is read after the program exited — so each is placed by its start time
 * (`at`), after every event that started no later (ties keep the order reported), and `seq` is
 * its position. Nothing goes before the current turn's first event (its user message): a turn's
 * events stay in it.
 */
export class Trajectory {
  readonly events: TrajectoryEvent[] = [];
  private currentTurn = 0;
  /** Index of the current turn's first event (its user message). */
  private turnStart = 0;
  /** Gateway calls an attempt turned out to be (see `claimGatewayCall`): each is claimed once. */
  private readonly claimed = new WeakSet<ToolCallEvent>();
  private readonly listeners = new Set<(event: TrajectoryEvent) => void>();

  get turn(): number {
    return this.currentTurn;
  }

  beginTurn(): number {
    this.turnStart = this.events.length;
    return ++this.currentTurn;
  }

  add(event: NewEvent, ties: 'after' | 'before' = 'after'): TrajectoryEvent {
    const at = event.at ?? Date.now();
    const position = { seq: this.events.length, turn: this.currentTurn, at };
    const full: TrajectoryEvent =
      event.type === 'message'
        ? { ...event, ...position }
        : {
            ...event,
            egress: event.egress ?? [],
            injected: event.injected ?? [],
            isError: event.isError ?? false,
            durationMs: event.durationMs ?? 0,
            observed: 'observed' in event ? event.observed : event.result,
            ...position,
          };
    // The turn's first event (its user message) stays first: nothing reported later goes before it.
    const first = this.events.length > this.turnStart ? this.turnStart + 1 : this.turnStart;
    let index = this.events.length;
    while (index > first && (this.events[index - 1]!.at > at || (ties === 'before' && this.events[index - 1]!.at === at))) index--;
    this.events.splice(index, 0, full);
    for (let i = index; i < this.events.length; i++) this.events[i]!.seq = i;
    for (const listener of this.listeners) listener(full);
    return full;
  }

  /**
   * The turn's final reply. When the agent already said exactly that as its last word of the turn
   * (Codex's last `agent_message`, Claude Code's last text block), that message becomes the reply
   * — it keeps the time it was said — rather than appearing twice.
   */
  addReply(text: string): TrajectoryEvent {
    const last = this.events.length - 1 > this.turnStart ? this.events.at(-1) : undefined;
    if (last?.type === 'message' && last.role === 'assistant' && last.interim && last.text.trim() === text.trim()) {
      delete last.interim;
      return last;
    }
    return this.add({ type: 'message', role: 'assistant', text });
  }

  /**
   * An action the agent reported itself (`AgentStartContext.recordNative`). A gateway call it says
   * failed is the gateway's to record when it got there — then it is in the trajectory already —
   * and an attempt when it never did.
   */
  addReported(event: Extract<NewEvent, { type: 'tool_call' }>): TrajectoryEvent | undefined {
    if (event.origin !== 'gateway') {
      const sent = event.at !== undefined && event.tool !== 'network_request' ? this.firstRequestBefore(event.at) : undefined;
      if (sent === undefined) return this.add({ ...event, origin: 'agent' });
      const end = event.at! + (event.durationMs ?? 0);
      return this.add({ ...event, origin: 'agent', at: sent, durationMs: end - sent }, 'before');
    }
    const since = event.at !== undefined ? event.at - ATTEMPT_SLACK_MS : 0;
    if (this.claimGatewayCall(event.tool, event.args, since)) return undefined;
    return this.add({ ...event, attempted: event.attempted ?? { reason: event.error ?? 'the call never reached the gateway' } });
  }

  /**
   * The event-time rule for the agent's own actions: one starts when the agent began it. A CLI's
   * report of a command comes from its output (Codex's `item.started`, a tool part's time), which
   * can lag the command itself, so a request the command sent may be on record (the egress proxy
   * notes its first byte) before the command's reported start. The agent's own network request of
   * this turn that came after its previous action ended and before `at` was sent by this action:
   * the action started no later than the first such request. Undefined when there is none.
   */
  private firstRequestBefore(at: number): number | undefined {
    const requests: number[] = [];
    let since = -Infinity;
    for (let i = this.events.length - 1; i > this.turnStart; i--) {
      const e = this.events[i]!;
      if (e.type !== 'tool_call' || e.origin !== 'agent') continue;
      if (e.tool === 'network_request') requests.push(e.at);
      else if (e.at + e.durationMs <= at) {
        since = e.at + e.durationMs; // requests before the previous action ended are its own
        break;
      }
    }
    const mine = requests.filter((t) => t >= since && t < at);
    return mine.length > 0 ? Math.min(...mine) : undefined;
  }

  /**
   * The gateway's record of a call an agent reported as failed (`tool` and `args` as sent, from
   * `since` on), claimed so no other report matches it; undefined when the call never reached
   * the gateway — then it is an attempt.
   */
  private claimGatewayCall(tool: string, args: Record<string, unknown>, since: number): ToolCallEvent | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i]!;
      if (e.at < since) break;
      if (e.type !== 'tool_call' || e.origin !== 'gateway' || e.attempted || e.tool !== tool || this.claimed.has(e) || !deepEqual(e.args, args)) continue;
      this.claimed.add(e);
      return e;
    }
    return undefined;
  }

  onEvent(listener: (event: TrajectoryEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  toolCalls(): ToolCallEvent[] {
    return this.events.filter((e): e is ToolCallEvent => e.type === 'tool_call');
  }

  /** Everything the agent said, in order: interim messages and final replies (the last one is the last turn's reply). */
  responses(): string[] {
    return this.events.filter((e): e is MessageEvent => e.type === 'message' && e.role === 'assistant').map((e) => e.text);
  }
}
