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
  /** The run's tool-call budget; calls past it are refused (as error results) and recorded. */
  maxToolCalls?: number;
}

/**
 * Sits between the agent and the sandbox: every call is recorded as a trajectory event with the
 * true result, what the agent observed, and which injections fired. Transport-free: the MCP
 * server (and in-process adapters) call `call()`.
 */
export class ToolGateway {
  private calls = 0;

  constructor(private readonly options: ToolGatewayOptions) {}

  tools(): ToolDescriptor[] {
    return this.options.sandbox.tools();
  }

  get trajectory(): Trajectory {
    return this.options.trajectory;
  }

  get injections(): InjectionPlan | undefined {
    return this.options.injections;
  }

  async call(tool: string, args: Record<string, unknown> = {}): Promise<GatewayReply> {
    const started = performance.now();
    const at = Date.now();
    const { sandbox, trajectory, injections, maxToolCalls } = this.options;
    if (maxToolCalls !== undefined && this.calls >= maxToolCalls) {
      const error = `tool-call budget of ${maxToolCalls} calls is exhausted`;
      trajectory.add({ type: 'tool_call', tool, args, result: null, isError: true, error, origin: 'gateway', at });
      return { text: error, isError: true };
    }
    this.calls++;
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
