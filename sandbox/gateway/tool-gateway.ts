import { toText } from '../../engine/json.js';
import type { ToolCallEvent, Trajectory } from '../../engine/trajectory.js';
import type { StartedSandbox, ToolDescriptor } from '../sandbox.js';
import type { InjectionPlan } from './injection-plan.js';

/** What the agent receives for one call. */
export interface GatewayReply {
  text: string;
  isError: boolean;
}

export interface ToolGatewayOptions {
  sandbox: StartedSandbox;
  trajectory: Trajectory;
  /** Present only in threat models that inject tool results. */
  injections?: InjectionPlan;
  /** The run's tool-call budget; calls past it are refused (as error results), the first few recorded. */
  maxToolCalls?: number;
  /** Called once, at the first call past the budget: the run should end the agent's turn. */
  onBudgetExhausted?: () => void;
}

/**
 * Refused calls recorded in the trajectory, per kind; the rest are only counted. An agent in a
 * loop can make hundreds of thousands of calls in seconds: the record must stay readable.
 */
export const RECORDED_REFUSALS = 3;

/** What the gateway refused: recorded (the first few) and counted. */
export interface GatewayStats {
  /** Calls that ran. */
  calls: number;
  /** Calls refused past the tool-call budget, and how many of them are not in the trajectory. */
  refused: number;
  refusedNotRecorded: number;
  /** Calls that arrived after the run had ended, and how many of them are not in the trajectory. */
  late: number;
  lateNotRecorded: number;
}

/**
 * Sits between the agent and the sandbox: every call is recorded as a trajectory event with the
 * true result, what the agent observed, and which injections fired. Transport-free: the MCP
 * server (and in-process adapters) call `call()`.
 */
export class ToolGateway {
  private readonly counts: GatewayStats = { calls: 0, refused: 0, refusedNotRecorded: 0, late: 0, lateNotRecorded: 0 };
  private ended = false;
  private readonly toolsChanged = new Set<() => void>();

  constructor(private readonly options: ToolGatewayOptions) {}

  /** The tool list as the agent sees it now: descriptions poisoned by the run's injections, if any. */
  /** The tools' names, for the record: unlike `tools()`, this shows the agent nothing, so no description rule fires. */
  toolNames(): string[] {
    return this.options.sandbox.tools().map((t) => t.name);
  }

  tools(): ToolDescriptor[] {
    const tools = this.options.sandbox.tools();
    return this.options.injections ? this.options.injections.describe(tools, this.counts.calls) : tools;
  }

  /** Calls `listener` whenever the tool list changes (MCP servers send `notifications/tools/list_changed`). Returns the unsubscribe. */
  onToolsChanged(listener: () => void): () => void {
    this.toolsChanged.add(listener);
    return () => this.toolsChanged.delete(listener);
  }

  get trajectory(): Trajectory {
    return this.options.trajectory;
  }

  get injections(): InjectionPlan | undefined {
    return this.options.injections;
  }

  stats(): GatewayStats {
    return { ...this.counts };
  }

  /** The run is over: later calls are refused, not executed (an agent that outlives its run must not change the state judged). */
  end(): void {
    this.ended = true;
  }

  async call(tool: string, args: Record<string, unknown> = {}): Promise<GatewayReply> {
    const started = performance.now();
    const at = Date.now();
    const { sandbox, trajectory, injections, maxToolCalls } = this.options;
    if (this.ended) {
      const error = 'the run has ended; this call was not executed';
      if (this.counts.late++ < RECORDED_REFUSALS)
        trajectory.add({ type: 'tool_call', tool, args, result: null, isError: true, error, origin: 'gateway', refused: 'late', at });
      else this.counts.lateNotRecorded++;
      return { text: error, isError: true };
    }
    if (maxToolCalls !== undefined && this.counts.calls >= maxToolCalls) {
      const error = `tool-call budget of ${maxToolCalls} calls is exhausted; no more tools can be used in this conversation`;
      if (this.counts.refused++ < RECORDED_REFUSALS)
        trajectory.add({ type: 'tool_call', tool, args, result: null, isError: true, error, origin: 'gateway', refused: 'budget', at });
      else this.counts.refusedNotRecorded++;
      if (this.counts.refused === 1) this.options.onBudgetExhausted?.();
      return { text: error, isError: true };
    }
    this.counts.calls++;
    if (injections?.toolsChangeAt(this.counts.calls)) for (const listener of this.toolsChanged) listener();
    const outcome = await sandbox.callTool(tool, args);
    let observed: unknown = outcome.isError ? outcome.error : outcome.value;
    let injected: string[] = [];
    if (injections && !outcome.isError) {
      const applied = injections.apply(tool, args, outcome.value);
      observed = applied.observed;
      injected = applied.fired;
    }
    const event: Omit<ToolCallEvent, 'seq' | 'turn'> = {
      type: 'tool_call',
      tool,
      args,
      result: outcome.isError ? null : outcome.value,
      observed,
      injected,
      isError: outcome.isError,
      egress: outcome.egress,
      origin: 'gateway',
      at,
      durationMs: performance.now() - started,
    };
    if (outcome.error !== undefined) event.error = outcome.error;
    trajectory.add(event);
    return { text: outcome.isError ? (outcome.error ?? 'error') : toText(observed), isError: outcome.isError };
  }
}
