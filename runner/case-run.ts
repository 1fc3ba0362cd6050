import type { AgentAdapter, AgentSession } from '../adapters/adapter.js';
import type { ControlAgent, ControlSession } from '../control/control.js';
import { InjectionPlan } from '../sandbox/gateway/injection-plan.js';
import type { StartedMcpGateway } from '../sandbox/gateway/mcp-http-host.js';
import { ToolGateway } from '../sandbox/gateway/tool-gateway.js';
import type { SandboxBackend, StartedSandbox } from '../sandbox/sandbox.js';
import { adversarialUser, environmentsOf, injectsToolResults, type ThreatModel } from '../engine/case-helpers.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { randomBytes } from 'node:crypto';
import { modelRoute, type ModelRoute } from '../provider/model-route.js';
import { offeredByTurn } from '../provider/model-request-log.js';
import type { JsonObject } from '../engine/json.js';
import { caseRecord } from './record-from-run.js';
import { newRunId, type PhaseTimings, type SafetyRecord, type Verdict } from '../engine/record-writer.js';
import { fillSecrets, generateSecrets, type Secrets } from '../engine/secrets.js';
import { injectionCalls } from '../engine/scripted-plan.js';
import { verdictOf } from '../engine/verdict.js';
import { ScriptedPlanFeed } from './scripted-plan-feed.js';
import { repeatSeed } from '../engine/seed.js';
import { Trajectory } from '../engine/trajectory.js';
import { networkAttemptEvent } from '../sandbox/confinement/egress-proxy.js';
import { evaluatePredicate, needsFinalState, type CustomCheck, type PredicateResult } from '../engine/verifier.js';

export interface CaseRunOptions {
  spec: SafetyCase;
  threatModel: ThreatModel;
  caseFile?: string;
  runId?: string;
  repeat?: number;
  /** This run's seed (recorded; given to the control agent). Default: derived from the case id and repeat. */
  seed?: number;
  /** Named TypeScript checks a hand-written case may reference with `custom:`. */
  custom?: Record<string, CustomCheck>;
  /** Cancels the run (test timeout, user abort); the case's time budget is added on top. */
  signal?: AbortSignal;
  /**
   * The run-wide model proxy (`startModelProxy`): agents and LLM controls send their model
   * traffic through it, and the run's requests, retries, waits and tokens go into the record.
   */
  modelProxyUrl?: string;
  /**
   * The agent under test's id, recorded even when the run fails before the agent starts (a
   * sandbox that does not start, an agent module that does not load); `startAgent` confirms it.
   */
  agentId?: string;
  /**
   * Origins of scripted model servers in other processes (the plugin's embedded one): a run that
   * talks to one sends it the case's plan out of band (`scripted-plan.ts`). Servers started in
   * this process are found without it.
   */
  scriptedModels?: string[];
  /**
   * The counterfactual of an injected run (`counterfactual.ts`): every injection rule in
   * `identity` mode — it still counts as delivered, but the attack text is gone.
   */
  injectionMode?: 'identity';
  /** The run's canary values (default: drawn fresh); a counterfactual reuses its run's. */
  secrets?: Secrets;
}

let mcpHost: Promise<typeof import('../sandbox/gateway/mcp-http-host.js')> | undefined;
/** The MCP host (and the SDK behind it), loaded with the first gateway of the process. */
function loadMcpHost(): Promise<typeof import('../sandbox/gateway/mcp-http-host.js')> {
  return (mcpHost ??= import('../sandbox/gateway/mcp-http-host.js'));
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason ?? 'aborted'));
}

/** How long an agent told that its tool-call budget is spent may take to finish its turn. */
const TOOL_BUDGET_GRACE_MS = 1000;

/** The run never reached a state worth judging (its sandbox or init script failed). */
class NotJudgedError extends Error {}

/** Why the conversation ended. */
export type StopReason = string;

/**
 * One case under one threat model, as a sequence of owned stages. Each `start*` acquires one
 * part and `dispose()` releases whatever was acquired, in reverse — whether the run passed,
 * failed, crashed or timed out. `runCase` calls the stages in order; the Vitest fixtures call
 * them one fixture at a time.
 */
export class CaseRun implements AsyncDisposable {
  readonly runId: string;
  readonly seed: number;
  readonly trajectory = new Trajectory();
  readonly secrets: Secrets;
  readonly signal: AbortSignal;
  readonly startedAt = new Date();
  readonly timings: PhaseTimings = { sandboxMs: 0, initMs: 0, gatewayMs: 0, agentStartMs: 0, controlMs: 0, agentMs: 0, modelMs: 0, verifyMs: 0 };
  readonly injections: InjectionPlan | undefined;
  readonly usage = { input: 0, output: 0 };

  sandbox: StartedSandbox | undefined;
  gateway: ToolGateway | undefined;
  mcp: StartedMcpGateway | undefined;
  session: AgentSession | undefined;
  control: ControlSession | undefined;
  agentId: string;
  /** The init script ran and the initial snapshot was taken: only then is there anything to judge. */
  initialized = false;
  controlId = 'none';
  initialState: JsonObject = {};
  finalState: JsonObject = {};
  stopReason: StopReason = 'not started';
  turns = 0;
  error: SafetyRecord['error'];

  private readonly budgetTimer: AbortController;
  private readonly began = performance.now();
  private disposing: Promise<void> | undefined;

  constructor(readonly options: CaseRunOptions) {
    const { spec, threatModel } = options;
    this.runId = options.runId ?? newRunId();
    this.agentId = options.agentId ?? 'none';
    this.seed = options.seed ?? repeatSeed(0, spec.id, options.repeat ?? 0);
    this.secrets = options.secrets ? { ...options.secrets } : generateSecrets(spec.secrets, spec.init);
    this.verifierNeedsState = needsFinalState(spec.verifier);
    this.planFeed = new ScriptedPlanFeed(options.scriptedModels ?? [], this.secrets);
    if (options.modelProxyUrl) {
      this.route = modelRoute(options.modelProxyUrl, `${this.runId}.${spec.id}.${threatModel}.${options.repeat ?? 0}.${randomBytes(4).toString('hex')}`);
    }
    this.budgetTimer = new AbortController();
    this.signal = options.signal ? AbortSignal.any([options.signal, this.budgetTimer.signal]) : this.budgetTimer.signal;
    if (injectsToolResults(threatModel)) {
      const identity = options.injectionMode === 'identity';
      const rules = identity ? spec.attack.injections.map((rule) => ({ ...rule, mode: 'identity' as const })) : spec.attack.injections;
      // Without the attack text (identity) the tool list is the environment's own.
      this.injections = new InjectionPlan(rules, { secrets: this.secrets, initial: {} }, identity ? [] : spec.attack.toolDescriptions);
    }
  }

  private readonly route: ModelRoute | undefined;
  /** Tells scripted model servers this run's plan, out of band. */
  private readonly planFeed: ScriptedPlanFeed;

  /** The base URL the agent of this run uses for `upstream`: the run's scripted plan and model proxy, when there are any. */
  private readonly modelBaseURL = (upstream: string): string => {
    const planned = this.planFeed.urlFor(upstream);
    return this.route ? this.route.baseURL(planned) : planned;
  };
  /** The same for the control agent: its traffic counts with the run, but what it is offered is not the agent's. */
  private readonly controlModelBaseURL = (upstream: string): string => {
    const planned = this.planFeed.urlFor(upstream);
    return this.route ? this.route.controlBaseURL(planned) : planned;
  };
  /** Ends the current turn (not the run) when the tool-call budget is spent. */
  private readonly turnStop = new AbortController();
  private toolBudgetSpent = false;
  private budgetTimeout: NodeJS.Timeout | undefined;
  private readonly verifierNeedsState: boolean;

  /**
   * The time budget is the agent's: it starts once the sandbox is ready, so a slow sandbox start
   * (a cold container) does not eat into it. The test timeout still bounds the whole run.
   */
  private armBudget(): void {
    if (this.budgetTimeout || this.signal.aborted) return;
    const seconds = this.spec.budgets.seconds;
    this.budgetTimeout = setTimeout(() => this.budgetTimer.abort(new Error(`time budget of ${seconds}s exceeded`)), seconds * 1000);
    this.budgetTimeout.unref();
  }

  private clearBudget(): void {
    if (this.budgetTimeout) clearTimeout(this.budgetTimeout);
  }

  get spec(): SafetyCase {
    return this.options.spec;
  }

  get threatModel(): ThreatModel {
    return this.options.threatModel;
  }

  /** Starts the sandbox and replays the init script, then takes the initial snapshot. */
  async startSandbox(backend: SandboxBackend): Promise<StartedSandbox> {
    let t = performance.now();
    this.sandbox = await backend.start({ environments: environmentsOf(this.spec), label: this.spec.id });
    this.timings.sandboxMs = performance.now() - t;
    t = performance.now();
    const steps = fillSecrets(this.spec.init, this.secrets);
    for (const [i, step] of steps.entries()) await this.sandbox.apply(step, i);
    this.initialState = await this.sandbox.snapshot();
    this.initialized = true;
    this.timings.initMs = performance.now() - t;
    this.armBudget();
    return this.sandbox;
  }

  /** Puts the recording gateway (and, where the threat model says so, the injections) in front of the sandbox. */
  async startGateway(options: { maxToolCalls?: number } = {}): Promise<StartedMcpGateway> {
    if (!this.sandbox) throw new Error('startGateway() before startSandbox()');
    const t = performance.now();
    this.injections?.useInitialState(this.initialState);
    this.gateway = new ToolGateway({
      sandbox: this.sandbox,
      trajectory: this.trajectory,
      ...(this.injections ? { injections: this.injections } : {}),
      maxToolCalls: options.maxToolCalls ?? this.spec.budgets.toolCalls,
      // Told by the refusal, the agent gets a moment to wrap up its turn; then the turn is ended.
      onBudgetExhausted: () => {
        this.toolBudgetSpent = true;
        setTimeout(() => this.turnStop.abort(new Error('tool-call budget exhausted')), TOOL_BUDGET_GRACE_MS).unref();
      },
    });
    const { startMcpGateway } = await loadMcpHost();
    this.mcp = await startMcpGateway(this.gateway);
    this.timings.gatewayMs = performance.now() - t;
    return this.mcp;
  }

  async startAgent(adapter: AgentAdapter): Promise<AgentSession> {
    if (!this.sandbox || !this.gateway || !this.mcp) throw new Error('startAgent() before startGateway()');
    const t = performance.now();
    const gateway = this.gateway;
    const sandbox = this.sandbox;
    const gatewayUrl = this.mcp.url;
    this.agentId = adapter.id;
    this.session = await adapter.start({
      gatewayUrl: this.mcp.url,
      gatewayName: this.mcp.serverName,
      tools: gateway.tools(),
      // Lazy: reading it makes the directory exist, and only agents with native actions need one.
      get workspace() {
        return sandbox.workspace;
      },
      signal: this.signal,
      callTool: (name, args) => gateway.call(name, args),
      connectMcpInMemory: async () => (await loadMcpHost()).connectInMemory(gateway),
      modelBaseURL: this.modelBaseURL,
      recordNative: (event) => this.trajectory.addReported(event),
      recordMessage: ({ text, at }) => {
        this.trajectory.add({ type: 'message', role: 'assistant', text, interim: true, ...(at !== undefined ? { at } : {}) });
      },
      // Whatever else a program may reach, the gateway it must.
      // What a confined program sends out through the sandbox's egress proxy is the agent's too.
      spawn: (command, args, options) =>
        sandbox.spawn(command, args, {
          ...options,
          network: [...(options?.network ?? []), gatewayUrl],
          onNetworkAttempt: (attempt) => this.trajectory.add(networkAttemptEvent(attempt)),
        }),
      backend: sandbox.backend,
    });
    this.timings.agentStartMs = performance.now() - t;
    if (this.injections) {
      const payloads = this.injections.payloads();
      this.planFeed.setInjections(this.injections.ruleIds.map((id) => ({ id, payload: payloads[id] ?? '', calls: injectionCalls(this.spec, id) })));
    }
    return this.session;
  }

  async startControl(agent: ControlAgent): Promise<ControlSession> {
    // An honest-user threat model never gets an adversary, whatever was configured.
    if (agent.role === 'adversary' && !adversarialUser(this.threatModel)) {
      throw new Error(`control agent ${agent.id} is an adversary, but in "${this.threatModel}" the user is honest`);
    }
    this.controlId = agent.id;
    this.control = await agent.start({
      spec: this.spec,
      threatModel: this.threatModel,
      budgets: this.spec.budgets,
      tools: this.sandbox?.tools() ?? [],
      injectionPayloads: this.injections?.payloads() ?? {},
      signal: this.signal,
      seed: this.seed,
      repeat: this.options.repeat ?? 0,
      modelBaseURL: this.controlModelBaseURL,
    });
    return this.control;
  }

  /** The conversation: control message → agent turn, until the control stops, the goal is reached or the budget ends. */
  async drive(): Promise<void> {
    const { session, control, sandbox } = this;
    if (!session || !control || !sandbox) throw new Error('drive() before the sandbox, agent and control are started');
    this.stopReason = 'turn budget';
    const adversarial = adversarialUser(this.threatModel);
    for (let turn = 0; turn < this.spec.budgets.turns; turn++) {
      this.throwIfAborted();
      let t = performance.now();
      const decision = await this.untilAborted(control.next({ turn, events: this.trajectory.events, responses: this.trajectory.responses() }));
      this.timings.controlMs += performance.now() - t;
      if (decision.action === 'stop') {
        this.stopReason = decision.reason;
        return;
      }
      if (decision.payloads && this.injections) {
        for (const [id, payload] of Object.entries(decision.payloads)) {
          if (this.injections.setPayload(id, payload)) this.planFeed.setPayload(id, payload);
        }
      }
      // Out of band, before the message: what a scripted model does with it (a real one never sees this).
      await this.untilAborted(this.planFeed.addTurn(decision.message, decision.calls ?? []));
      this.trajectory.beginTurn();
      this.trajectory.add({ type: 'message', role: 'user', text: decision.message });
      t = performance.now();
      let reply;
      try {
        reply = await this.untilAborted(session.send(decision.message, { signal: AbortSignal.any([this.signal, this.turnStop.signal]) }), this.turnStop.signal);
      } catch (error) {
        // The budget's end is how this conversation ends, not a fault: the run is judged as it stands.
        if (!this.turnStop.signal.aborted || this.signal.aborted) throw error;
        this.timings.agentMs += performance.now() - t;
        this.stopReason = 'tool-call budget exhausted';
        return;
      }
      this.timings.agentMs += performance.now() - t;
      this.timings.modelMs += reply.modelMs ?? 0;
      this.turns++;
      if (reply.usage) {
        this.usage.input += reply.usage.input;
        this.usage.output += reply.usage.output;
      }
      this.trajectory.addReply(reply.response);
      if (this.toolBudgetSpent) {
        this.stopReason = 'tool-call budget exhausted';
        return;
      }
      // An adversary stops once the goal is reached: more turns would only add noise to the record.
      if (adversarial && turn + 1 < this.spec.budgets.turns) {
        t = performance.now();
        // A verifier over the trajectory alone needs no snapshot between turns.
        const now = this.verify(this.verifierNeedsState ? await sandbox.snapshot() : this.initialState);
        this.timings.verifyMs += performance.now() - t;
        if (now.holds) {
          this.stopReason = 'goal reached';
          return;
        }
      }
    }
  }

  /**
   * Waits for `work` unless the run is aborted first. An agent that ignores its abort signal
   * (a hung process, a stuck loop) must not hold the run past its budget.
   */
  private untilAborted<T>(work: Promise<T>, also?: AbortSignal): Promise<T> {
    const signal = also ? AbortSignal.any([this.signal, also]) : this.signal;
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.withDiagnostics(abortReason(signal)));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(signal.aborted ? this.withDiagnostics(abortReason(signal)) : error);
        },
      );
    });
  }

  /** A budget abort says what the agent was doing: its own diagnostics (stderr tail) as detail. */
  private withDiagnostics(error: Error): Error {
    const detail = this.session?.diagnostics?.();
    if (!detail || (error as { detail?: unknown }).detail !== undefined) return error;
    const wrapped = new Error(error.message) as Error & { detail: string };
    wrapped.name = error.name;
    wrapped.detail = detail;
    return wrapped;
  }

  private throwIfAborted(): void {
    if (this.signal.aborted) throw abortReason(this.signal);
  }

  verify(finalState: JsonObject): PredicateResult {
    return evaluatePredicate(this.spec.verifier, {
      events: this.trajectory.events,
      initial: this.initialState,
      final: finalState,
      responses: this.trajectory.responses(),
      secrets: this.secrets,
      ...(this.options.custom ? { custom: this.options.custom } : {}),
    });
  }

  /** Records a fault (agent crash, timeout, sandbox failure): the run is kept, with what it had. */
  fail(error: unknown): void {
    const e = error as { name?: string; message?: string; detail?: unknown };
    this.error = { kind: e?.name ?? 'Error', message: e?.message ?? String(error), ...(typeof e?.detail === 'string' ? { detail: e.detail } : {}) };
    this.stopReason = `error: ${this.error.message}`;
  }

  /** Takes the final snapshot, judges the run and builds its record. Never throws for agent faults. */
  async finish(): Promise<SafetyRecord> {
    this.clearBudget();
    // From here on the state is what gets judged: a call that still arrives is refused.
    this.gateway?.end();
    // What the injections did is read once, here, for the verdict and the record alike: nothing the
    // harness does afterwards (listing tools for the record) may change what the verdict was based on.
    const injections = { rules: this.injections?.ruleIds ?? [], fired: this.injections?.fired() ?? [], payloads: this.injections?.payloads() ?? {} };
    const t = performance.now();
    let verdict: Verdict;
    let utility: SafetyRecord['utility'];
    try {
      // A sandbox that never started, or whose init script failed, holds nothing to judge: a
      // predicate over its (empty) state would be vacuous — "the mail does not exist" is no harm.
      if (!this.initialized) throw new NotJudgedError(this.error ? this.error.message : 'the sandbox was not started');
      if (this.sandbox) this.finalState = await this.sandbox.snapshot();
      const result = this.verify(this.finalState);
      if (this.spec.utility) {
        utility = evaluatePredicate(
          this.spec.utility,
          {
            events: this.trajectory.events,
            initial: this.initialState,
            final: this.finalState,
            responses: this.trajectory.responses(),
            secrets: this.secrets,
            ...(this.options.custom ? { custom: this.options.custom } : {}),
          },
          'utility',
        );
      }
      verdict = this.verdictFor(result, injections);
    } catch (error) {
      if (!(error instanceof NotJudgedError)) this.error ??= { kind: (error as Error).name, message: `verification failed: ${(error as Error).message}` };
      this.error ??= { kind: 'NotStarted', message: (error as Error).message };
      verdict = this.verdictFor(undefined, injections);
    }
    this.timings.verifyMs += performance.now() - t;
    const [provider, requests] = await Promise.all([this.route?.stats(), this.route?.requests()]);
    const turnStarts = this.trajectory.events.filter((e) => e.type === 'message' && e.role === 'user').map((e) => e.at);
    const gateway = { name: this.mcp?.serverName ?? '', tools: this.gateway?.toolNames() ?? [] };
    const offered = requests && requests.requests.length + requests.unlogged > 0 ? offeredByTurn(requests, turnStarts, gateway) : undefined;
    let agentProgram: SafetyRecord['agentProgram'];
    try {
      agentProgram = this.session?.report?.();
    } catch {
      // An adapter that cannot describe its program leaves that out of the record; the run stands.
    }
    return caseRecord(this, { verdict, utility, injections, provider, offered, agentProgram, durationMs: performance.now() - this.began });
  }

  /** The verdict rule (engine/verdict.ts), shared with `vera replay`; `undefined`: nothing to judge. */
  private verdictFor(result: PredicateResult | undefined, injections: { rules: string[]; fired: string[] }): Verdict {
    return verdictOf({
      result,
      error: this.error,
      injections,
      control: { threatModel: this.threatModel, transcript: this.control?.transcript ?? [] },
    });
  }

  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      this.clearBudget();
      const results = await Promise.allSettled([this.session?.close(), this.planFeed.close()]);
      const rest = await Promise.allSettled([this.mcp?.stop(), this.sandbox?.stop()]);
      const failed = [...results, ...rest].find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      if (failed) throw failed.reason;
    })();
    return this.disposing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
