import type { AgentAdapter, AgentSession } from '../adapters/adapter.js';
import type { ControlAgent, ControlSession } from '../control/control.js';
import { adversarialUser, environmentsOf, type ThreatModel } from '../engine/case-helpers.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { VeraError, type VeraErrorCode } from '../engine/errors.js';
import { injectionCalls } from '../engine/scripted-plan.js';
import { fillSecrets, type Secrets } from '../engine/secrets.js';
import { evaluateRunPredicate, judgeRun, type JudgedRun } from './judge-run.js';
import { networkAttemptEvent } from '../sandbox/confinement/egress-proxy.js';
import type { StartedMcpGateway } from '../sandbox/gateway/mcp-http-host.js';
import { ToolGateway } from '../sandbox/gateway/tool-gateway.js';
import type { SandboxBackend, StartedSandbox } from '../sandbox/sandbox.js';
import { RunContext, type CaseRunOptions } from './run-context.js';

let mcpHost: Promise<typeof import('../sandbox/gateway/mcp-http-host.js')> | undefined;
/** The MCP host (and the SDK behind it), loaded with the first gateway of the process. */
function loadMcpHost(): Promise<typeof import('../sandbox/gateway/mcp-http-host.js')> {
  return (mcpHost ??= import('../sandbox/gateway/mcp-http-host.js'));
}

/** How long an agent told that its tool-call budget is spent may take to finish its turn. */
const TOOL_BUDGET_GRACE_MS = 1000;

/**
 * One case under one threat model as typed stages, each returned by the one before and left once:
 *
 *   prepareRun() → PreparedRun ─startSandbox→ SandboxedRun ─startGateway→ ConnectedRun
 *     ─startAgent→ AgentStartedRun ─startControl→ StartedRun ─drive→ FinishedRun ─judge→ JudgedRun
 *
 * Any live stage may `end(error)` instead of going on: the run is then finished with that fault
 * and judged as it stands. The record exists only on the judged stage, built once and frozen;
 * nothing outside the stages can change what a run holds. `PreparedRun` owns the parts: disposing
 * it releases whatever was acquired, in reverse — whether the run passed, failed, crashed or timed out.
 */
export function prepareRun(options: CaseRunOptions): PreparedRun {
  return new PreparedRun(new RunContext(options));
}

/** What every stage says about its run. */
export abstract class RunStage {
  constructor(protected readonly ctx: RunContext) {}

  get runId(): string {
    return this.ctx.runId;
  }
  get spec(): SafetyCase {
    return this.ctx.spec;
  }
  get threatModel(): ThreatModel {
    return this.ctx.threatModel;
  }
  get seed(): number {
    return this.ctx.seed;
  }
  get secrets(): Readonly<Secrets> {
    return this.ctx.secrets;
  }
  get signal(): AbortSignal {
    return this.ctx.signal;
  }
}

/** A stage the run can still leave by a fault: it ends there and is judged as it stands. */
export abstract class LiveStage extends RunStage {
  /** Ends the run at this stage with `error` (its code: its own, else `code`, else this stage's). */
  end(error: unknown, code?: VeraErrorCode): FinishedRun {
    assertLive(this.ctx);
    this.ctx.recordFault(error, code);
    return finishRun(this.ctx, `error: ${this.ctx.error?.message ?? String(error)}`);
  }
}

export class PreparedRun extends LiveStage implements AsyncDisposable {
  /** Starts the sandbox and replays the init script, then takes the initial snapshot. */
  async startSandbox(backend: SandboxBackend): Promise<SandboxedRun> {
    const { ctx } = this;
    ctx.at('prepared');
    let t = performance.now();
    const sandbox = await backend.start({ environments: environmentsOf(ctx.spec), label: ctx.spec.id });
    ctx.parts.sandbox = sandbox;
    ctx.timings.sandboxMs = performance.now() - t;
    t = performance.now();
    const steps = fillSecrets(ctx.spec.init, ctx.secrets);
    for (const [i, step] of steps.entries()) await sandbox.apply(step, i);
    ctx.initialState = await sandbox.snapshot();
    ctx.initialized = true;
    ctx.timings.initMs = performance.now() - t;
    ctx.armBudget();
    ctx.advance('prepared', 'sandboxed');
    return new SandboxedRun(ctx, sandbox);
  }

  /** The run's verdict and record, once it has one. */
  get judged(): Promise<JudgedRun> | undefined {
    return this.ctx.judgement;
  }

  /**
   * The run's judged stage, however far it got: the verdict it reached, or — when it stopped
   * before one (a fixture failed, the test was cancelled) — judged where it stands, with `error`.
   */
  judgedOrEnded(error: unknown): Promise<JudgedRun> {
    if (this.ctx.judgement) return this.ctx.judgement;
    // Finished but not judged: judge it as it ended (the fault, if any, is already its own).
    if (this.ctx.stage === 'finished') return this.ctx.finished!.judge();
    return this.end(error, 'RUN_INTERRUPTED').judge();
  }

  dispose(): Promise<void> {
    return this.ctx.dispose();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

export class SandboxedRun extends LiveStage {
  constructor(
    ctx: RunContext,
    readonly sandbox: StartedSandbox,
  ) {
    super(ctx);
  }

  /** Puts the recording gateway (and, where the threat model says so, the injections) in front of the sandbox. */
  async startGateway(options: { maxToolCalls?: number } = {}): Promise<ConnectedRun> {
    const { ctx, sandbox } = this;
    ctx.at('sandboxed');
    const t = performance.now();
    ctx.injections?.useInitialState(ctx.initialState);
    const gateway = new ToolGateway({
      sandbox,
      trajectory: ctx.trajectory,
      ...(ctx.injections ? { injections: ctx.injections } : {}),
      maxToolCalls: options.maxToolCalls ?? ctx.spec.budgets.toolCalls,
      // Told by the refusal, the agent gets a moment to wrap up its turn; then the turn is ended.
      onBudgetExhausted: () => {
        ctx.toolBudget.spent = true;
        setTimeout(() => ctx.toolBudget.turnStop.abort(new Error('tool-call budget exhausted')), TOOL_BUDGET_GRACE_MS).unref();
      },
    });
    ctx.parts.gateway = gateway;
    const { startMcpGateway } = await loadMcpHost();
    const mcp = await startMcpGateway(gateway);
    ctx.parts.mcp = mcp;
    ctx.timings.gatewayMs = performance.now() - t;
    ctx.advance('sandboxed', 'connected');
    return new ConnectedRun(ctx, sandbox, gateway, mcp);
  }
}

export class ConnectedRun extends LiveStage {
  constructor(
    ctx: RunContext,
    readonly sandbox: StartedSandbox,
    private readonly toolGateway: ToolGateway,
    readonly gateway: StartedMcpGateway,
  ) {
    super(ctx);
  }

  async startAgent(adapter: AgentAdapter): Promise<AgentStartedRun> {
    const { ctx, sandbox, toolGateway, gateway } = this;
    ctx.at('connected');
    const t = performance.now();
    ctx.agentId = adapter.id;
    const session = await adapter.start({
      gatewayUrl: gateway.url,
      gatewayName: gateway.serverName,
      tools: toolGateway.tools(),
      // Lazy: reading it makes the directory exist, and only agents with native actions need one.
      get workspace() {
        return sandbox.workspace;
      },
      signal: ctx.signal,
      callTool: (name, args) => toolGateway.call(name, args),
      connectMcpInMemory: async () => (await loadMcpHost()).connectInMemory(toolGateway),
      modelBaseURL: ctx.modelBaseURL,
      recordNative: (event) => ctx.trajectory.addReported(event),
      recordMessage: ({ text, at }) => {
        ctx.trajectory.add({ type: 'message', role: 'assistant', text, interim: true, ...(at !== undefined ? { at } : {}) });
      },
      // Whatever else a program may reach, the gateway it must.
      // What a confined program sends out through the sandbox's egress proxy is the agent's too.
      spawn: (command, args, options) =>
        sandbox.spawn(command, args, {
          ...options,
          network: [...(options?.network ?? []), gateway.url],
          onNetworkAttempt: (attempt) => ctx.trajectory.add(networkAttemptEvent(attempt)),
        }),
      backend: sandbox.backend,
    });
    ctx.parts.session = session;
    ctx.timings.agentStartMs = performance.now() - t;
    if (ctx.injections) {
      const payloads = ctx.injections.payloads();
      ctx.planFeed.setInjections(ctx.injections.ruleIds.map((id) => ({ id, payload: payloads[id] ?? '', calls: injectionCalls(ctx.spec, id) })));
    }
    ctx.advance('connected', 'agent-started');
    return new AgentStartedRun(ctx, session);
  }
}

export class AgentStartedRun extends LiveStage {
  constructor(
    ctx: RunContext,
    readonly session: AgentSession,
  ) {
    super(ctx);
  }

  async startControl(agent: ControlAgent): Promise<StartedRun> {
    const { ctx } = this;
    ctx.at('agent-started');
    // An honest-user threat model never gets an adversary, whatever was configured.
    if (agent.role === 'adversary' && !adversarialUser(ctx.threatModel)) {
      throw new VeraError('CONTROL_START_FAILED', `control agent ${agent.id} is an adversary, but in "${ctx.threatModel}" the user is honest`);
    }
    ctx.controlId = agent.id;
    const control = await agent.start({
      spec: ctx.spec,
      threatModel: ctx.threatModel,
      budgets: ctx.spec.budgets,
      tools: ctx.parts.sandbox?.tools() ?? [],
      injectionPayloads: ctx.injections?.payloads() ?? {},
      signal: ctx.signal,
      seed: ctx.seed,
      repeat: ctx.options.repeat ?? 0,
      modelBaseURL: ctx.controlModelBaseURL,
    });
    ctx.parts.control = control;
    ctx.advance('agent-started', 'started');
    return new StartedRun(ctx, this.session, control);
  }
}

/** Every part is up: the conversation can run. */
export class StartedRun extends LiveStage {
  constructor(
    ctx: RunContext,
    readonly session: AgentSession,
    readonly control: ControlSession,
  ) {
    super(ctx);
  }

  /**
   * The conversation: control message → agent turn, until the control stops, the goal is reached
   * or a budget ends. Never throws: a fault finishes the run with it (coded by who failed).
   */
  async drive(): Promise<FinishedRun> {
    const { ctx, session, control } = this;
    ctx.at('started');
    const adversarial = adversarialUser(ctx.threatModel);
    const { toolBudget } = ctx;
    // The run may have been ended from outside meanwhile (the test was cancelled and its fixture judged
    // the run where it stood): then the conversation's end is that one, not a second.
    const finished = (stopReason: string) => ctx.finished ?? finishRun(ctx, stopReason);
    let failing: VeraErrorCode = 'HARNESS_FAILED';
    try {
      for (let turn = 0; turn < ctx.spec.budgets.turns; turn++) {
        ctx.throwIfAborted();
        let t = performance.now();
        failing = 'CONTROL_FAILED';
        const decision = await ctx.untilAborted(control.next({ turn, events: ctx.trajectory.events, responses: ctx.trajectory.responses() }));
        failing = 'HARNESS_FAILED';
        ctx.timings.controlMs += performance.now() - t;
        if (decision.action === 'stop') return finished(decision.reason);
        if (decision.payloads && ctx.injections) {
          for (const [id, payload] of Object.entries(decision.payloads)) {
            if (ctx.injections.setPayload(id, payload)) ctx.planFeed.setPayload(id, payload);
          }
        }
        // Out of band, before the message: what a scripted model does with it (a real one never sees this).
        await ctx.untilAborted(ctx.planFeed.addTurn(decision.message, decision.calls ?? []));
        ctx.trajectory.beginTurn();
        ctx.trajectory.add({ type: 'message', role: 'user', text: decision.message });
        t = performance.now();
        let reply;
        failing = 'AGENT_FAILED';
        try {
          reply = await ctx.untilAborted(
            session.send(decision.message, { signal: AbortSignal.any([ctx.signal, toolBudget.turnStop.signal]) }),
            toolBudget.turnStop.signal,
          );
        } catch (error) {
          // The budget's end is how this conversation ends, not a fault: the run is judged as it stands.
          if (!toolBudget.turnStop.signal.aborted || ctx.signal.aborted) throw error;
          ctx.timings.agentMs += performance.now() - t;
          return finished('tool-call budget exhausted');
        }
        failing = 'HARNESS_FAILED';
        ctx.timings.agentMs += performance.now() - t;
        ctx.timings.modelMs += reply.modelMs ?? 0;
        ctx.turnsSoFar++;
        if (reply.usage) {
          ctx.usage.input += reply.usage.input;
          ctx.usage.output += reply.usage.output;
        }
        ctx.trajectory.addReply(reply.response);
        if (toolBudget.spent) return finished('tool-call budget exhausted');
        // An adversary stops once the goal is reached: more turns would only add noise to the record.
        if (adversarial && turn + 1 < ctx.spec.budgets.turns) {
          t = performance.now();
          failing = 'VERIFICATION_FAILED';
          // A verifier over the trajectory alone needs no snapshot between turns.
          const state = ctx.verifierNeedsState && ctx.parts.sandbox ? await ctx.parts.sandbox.snapshot() : ctx.initialState;
          const now = evaluateRunPredicate(ctx, ctx.spec.verifier, state);
          failing = 'HARNESS_FAILED';
          ctx.timings.verifyMs += performance.now() - t;
          if (now.holds) return finished('goal reached');
        }
      }
      return finished('turn budget');
    } catch (error) {
      return ctx.finished ?? this.end(error, failing);
    }
  }
}

/** The conversation is over (or never happened): what remains is to judge it. */
export class FinishedRun extends RunStage {
  constructor(
    ctx: RunContext,
    /** Why the conversation ended. */
    readonly stopReason: string,
    readonly turns: number,
  ) {
    super(ctx);
  }

  /** The fault that ended the run, when one did. */
  get error(): Readonly<NonNullable<RunContext['error']>> | undefined {
    return this.ctx.error;
  }

  /** Takes the final snapshot, judges the run and builds its record, once. Never throws for agent faults. */
  judge(): Promise<JudgedRun> {
    this.ctx.judgement ??= judgeRun(this.ctx, this);
    return this.ctx.judgement;
  }
}

function assertLive(ctx: RunContext): void {
  if (ctx.stage === 'finished' || ctx.stage === 'judged') throw new VeraError('RUN_STAGE_ORDER', `this run is already ${ctx.stage}`);
}

/** Finishes the run with `stopReason`; the turns it completed are counted now (a late reply does not change them). */
function finishRun(ctx: RunContext, stopReason: string): FinishedRun {
  assertLive(ctx);
  ctx.advance(ctx.stage, 'finished');
  ctx.clearBudget();
  ctx.finished = new FinishedRun(ctx, stopReason, ctx.turnsSoFar);
  return ctx.finished;
}

export type { CaseRunOptions, JudgedRun };
