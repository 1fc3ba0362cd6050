/**
 * What happened in a run, as data. The gateway appends tool calls; adapters append the agent's
 * native actions (shell commands, file edits) that never pass through the gateway; the engine
 * appends the messages. Verifiers read only this and the environment snapshots.
 */

/** Something that left through a channel the environment marks external. */
export interface EgressRecord {
  channel: string;
  destination: string;
  content: string;
}

export interface MessageEvent {
  type: 'message';
  seq: number;
  turn: number;
  role: 'user' | 'assistant';
  text: string;
  at: number;
}

export interface ToolCallEvent {
  type: 'tool_call';
  seq: number;
  turn: number;
  tool: string;
  args: Record<string, unknown>;
  /** What the tool really returned. */
  result: unknown;
  /** What the agent saw: the result after injection (equal to `result` when nothing was injected). */
  observed: unknown;
  /** Ids of the injection rules that rewrote this result. */
  injected: string[];
  isError: boolean;
  error?: string;
  egress: EgressRecord[];
  /** `gateway`: through the recording MCP gateway; `agent`: the agent's own native action. */
  origin: 'gateway' | 'agent';
  /**
   * Set when the gateway refused the call without running it: `budget` (the run's tool-call
   * budget was spent), `late` (the call arrived after the run had ended).
   */
  refused?: 'budget' | 'late';
  at: number;
  durationMs: number;
}

export type TrajectoryEvent = MessageEvent | ToolCallEvent;

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
