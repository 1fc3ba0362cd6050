/**
 * What happened in a run, as data. The gateway appends tool calls; adapters append the agent's
 * native actions (shell commands, file edits) that never pass through the gateway; the engine
 * appends the messages. Verifiers read only this and the environment snapshots.
 */

import type { MessageEvent, ToolCallEvent, TrajectoryEvent } from './trajectory-schema.js';

// The event types are inferred from their schemas (trajectory-schema.ts), re-exported here where
// the rest of the project has always found them.
export type { EgressRecord, MessageEvent, ToolCallEvent, TrajectoryEvent } from './trajectory-schema.js';

export type NewEvent =
  | Omit<MessageEvent, 'seq' | 'turn' | 'at'>
  | (Omit<ToolCallEvent, 'seq' | 'turn' | 'at' | 'egress' | 'injected' | 'observed' | 'durationMs' | 'isError'> &
      Partial<Pick<ToolCallEvent, 'egress' | 'injected' | 'observed' | 'durationMs' | 'isError' | 'at'>>);

/** Append-only event log of one run. */
export class Trajectory {
  readonly events: TrajectoryEvent[] = [];
  private currentTurn = 0;
  private readonly listeners = new Set<(event: TrajectoryEvent) => void>();

  get turn(): number {
    return this.currentTurn;
  }

  beginTurn(): number {
    return ++this.currentTurn;
  }

  add(event: NewEvent): TrajectoryEvent {
    const full = (
      event.type === 'message'
        ? { ...event, seq: this.events.length, turn: this.currentTurn, at: Date.now() }
        : {
            egress: [],
            injected: [],
            isError: false,
            durationMs: 0,
            ...event,
            observed: 'observed' in event ? event.observed : event.result,
            seq: this.events.length,
            turn: this.currentTurn,
            at: event.at ?? Date.now(),
          }
    ) as TrajectoryEvent;
    this.events.push(full);
    for (const listener of this.listeners) listener(full);
    return full;
  }

  onEvent(listener: (event: TrajectoryEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  toolCalls(): ToolCallEvent[] {
    return this.events.filter((e): e is ToolCallEvent => e.type === 'tool_call');
  }

  responses(): string[] {
    return this.events.filter((e): e is MessageEvent => e.type === 'message' && e.role === 'assistant').map((e) => e.text);
  }
}
