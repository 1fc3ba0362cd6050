import { randomBytes } from 'node:crypto';
import type { AgentSession } from '../adapters/adapter.js';
import type { ControlSession } from '../control/control.js';
import { injectsToolResults, type ThreatModel } from '../engine/case-helpers.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { errorEntry, VeraError, type VeraErrorCode } from '../engine/errors.js';
import type { JsonObject } from '../engine/json.js';
import { newRunId, type PhaseTimings, type SafetyRecord } from '../engine/record-writer.js';
import { generateSecrets, type Secrets } from '../engine/secrets.js';
import { repeatSeed } from '../engine/seed.js';
import { Trajectory } from '../engine/trajectory.js';
import { needsFinalState, type CustomCheck } from '../engine/verifier.js';
import { modelRoute, type ModelRoute } from '../provider/model-route.js';
import { InjectionPlan } from '../sandbox/gateway/injection-plan.js';
import type { StartedMcpGateway } from '../sandbox/gateway/mcp-http-host.js';
import type { ToolGateway } from '../sandbox/gateway/tool-gateway.js';
import type { StartedSandbox } from '../sandbox/sandbox.js';
import type { JudgedRun } from './judge-run.js';
import type { FinishedRun } from './run-stages.js';
import { ScriptedPlanFeed } from './scripted-plan-feed.js';

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
   * talks to one sends it the case's plan out of band (`scripted-plan-feed.ts`). Servers started in
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

/** How far a run got; each stage (run-stages.ts) may be left once, to the next. */
export type RunStageName = 'prepared' | 'sandboxed' | 'connected' | 'agent-started' | 'started' | 'finished' | 'judged';

/** A fault with no code of its own is coded by the stage it happened in. */
const STAGE_FAULT: Record<RunStageName, VeraErrorCode> = {
  prepared: 'SANDBOX_START_FAILED',
  sandboxed: 'GATEWAY_START_FAILED',
  connected: 'AGENT_START_FAILED',
  'agent-started': 'CONTROL_START_FAILED',
  started: 'HARNESS_FAILED',
  finished: 'HARNESS_FAILED',
  judged: 'HARNESS_FAILED',
};

/** The parts a run acquired, in the order it acquired them; released in reverse. */
export interface RunParts {
  sandbox?: StartedSandbox;
  gateway?: ToolGateway;
  mcp?: StartedMcpGateway;
  session?: AgentSession;
  control?: ControlSession;
}

/**
 * What one run owns and accumulates while it is live — identity, canaries, budget, trajectory,
 * timings, the parts it acquired — shared by its stages and seen by nobody else (not exported by
 * the package). The stages are the only way to move it on; once judged it changes no more.
 */
export class RunContext {
  readonly runId: string;
  readonly seed: number;
  readonly secrets: Secrets;
  readonly signal: AbortSignal;
  readonly startedAt = new Date();
  readonly began = performance.now();
  readonly trajectory = new Trajectory();
  readonly timings: PhaseTimings = { sandboxMs: 0, initMs: 0, gatewayMs: 0, agentStartMs: 0, controlMs: 0, agentMs: 0, modelMs: 0, verifyMs: 0 };
  readonly usage = { input: 0, output: 0 };
  readonly injections: InjectionPlan | undefined;
  readonly planFeed: ScriptedPlanFeed;
  readonly route: ModelRoute | undefined;
  readonly verifierNeedsState: boolean;
  readonly parts: RunParts = {};
  agentId: string;
  controlId = 'none';
  initialState: JsonObject = {};
  /** The init script ran and the initial snapshot was taken: only then is there anything to judge. */
  initialized = false;
  /** The first fault of the run, as its record keeps it. */
  error: SafetyRecord['error'];
  /** Agent turns completed. */
  turnsSoFar = 0;
  /** The tool-call budget: spent once the gateway refuses a call; then the turn is ended. */
  readonly toolBudget = { spent: false, turnStop: new AbortController() };
  /** Set once the conversation is over; judged once. */
  finished: FinishedRun | undefined;
  judgement: Promise<JudgedRun> | undefined;

  private current: RunStageName = 'prepared';
  private readonly budgetTimer = new AbortController();
  private budgetTimeout: NodeJS.Timeout | undefined;
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
    this.signal = options.signal ? AbortSignal.any([options.signal, this.budgetTimer.signal]) : this.budgetTimer.signal;
    if (injectsToolResults(threatModel)) {
      const identity = options.injectionMode === 'identity';
      const rules = identity ? spec.attack.injections.map((rule) => ({ ...rule, mode: 'identity' as const })) : spec.attack.injections;
      // Without the attack text (identity) the tool list is the environment's own.
      this.injections = new InjectionPlan(rules, { secrets: this.secrets, initial: {} }, identity ? [] : spec.attack.toolDescriptions);
    }
  }

  get spec(): SafetyCase {
    return this.options.spec;
  }

  get threatModel(): ThreatModel {
    return this.options.threatModel;
  }

  get stage(): RunStageName {
    return this.current;
  }

  /** Refuses a stage that is not the run's current one (used twice, or out of order). */
  at(stage: RunStageName): void {
    if (this.current !== stage) throw new VeraError('RUN_STAGE_ORDER', `this run is ${this.current}, not ${stage}: a stage is left once, to the next`);
  }

  /** Moves the run from `from` to `to`; a stage used twice, or out of order, is a caller's bug. */
  advance(from: RunStageName, to: RunStageName): void {
    if (this.current !== from) throw new VeraError('RUN_STAGE_ORDER', `this run is ${this.current}: it cannot go from ${from} to ${to}`);
    this.current = to;
  }

  /**
   * Keeps the run's first fault. Its code: the abort's when the run was aborted (the budget or from
   * outside), else the error's own, else `fallback`, else the stage's it happened in. `context`
   * goes before the message (`verification failed: …`).
   */
  recordFault(error: unknown, fallback?: VeraErrorCode, context?: string): void {
    if (this.error) return;
    const aborted = this.budgetTimer.signal.aborted ? 'RUN_TIME_BUDGET' : this.options.signal?.aborted ? 'RUN_ABORTED' : undefined;
    const entry = errorEntry(error, fallback ?? STAGE_FAULT[this.current]);
    // The agent's fault during the conversation names its turn.
    const turn = entry.code === 'AGENT_FAILED' && this.trajectory.turn > 0 ? { turn: this.trajectory.turn } : {};
    this.error = { ...entry, ...turn, ...(aborted ? { code: aborted } : {}), ...(context ? { message: `${context}: ${entry.message}` } : {}) };
  }

  /**
   * The time budget is the agent's: it starts once the sandbox is ready, so a slow sandbox start
   * (a cold container) does not eat into it. The test timeout still bounds the whole run.
   */
  armBudget(): void {
    if (this.budgetTimeout || this.signal.aborted) return;
    const seconds = this.spec.budgets.seconds;
    this.budgetTimeout = setTimeout(() => this.budgetTimer.abort(new VeraError('RUN_TIME_BUDGET', `time budget of ${seconds}s exceeded`)), seconds * 1000);
    this.budgetTimeout.unref();
  }

  clearBudget(): void {
    if (this.budgetTimeout) clearTimeout(this.budgetTimeout);
  }

  /** The base URL the agent of this run uses for `upstream`: the run's scripted plan and model proxy, when there are any. */
  readonly modelBaseURL = (upstream: string): string => {
    const planned = this.planFeed.urlFor(upstream);
    return this.route ? this.route.baseURL(planned) : planned;
  };

  /** The same for the control agent: its traffic counts with the run, but what it is offered is not the agent's. */
  readonly controlModelBaseURL = (upstream: string): string => {
    const planned = this.planFeed.urlFor(upstream);
    return this.route ? this.route.controlBaseURL(planned) : planned;
  };

  /**
   * Waits for `work` unless the run is aborted first. An agent that ignores its abort signal
   * (a hung process, a stuck loop) must not hold the run past its budget.
   */
  untilAborted<T>(work: Promise<T>, also?: AbortSignal): Promise<T> {
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

  throwIfAborted(): void {
    if (this.signal.aborted) throw abortReason(this.signal);
  }

  /** A budget abort says what the agent was doing: its own diagnostics (stderr tail) as detail. */
  private withDiagnostics(error: Error): Error {
    const detail = this.parts.session?.diagnostics?.();
    if (!detail || (error as { detail?: unknown }).detail !== undefined) return error;
    const wrapped = new Error(error.message) as Error & { detail: string };
    wrapped.name = error.name;
    wrapped.detail = detail;
    return wrapped;
  }

  /** Releases every part the run acquired, in reverse; once, whoever asks. */
  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      this.clearBudget();
      const { session, mcp, sandbox } = this.parts;
      const results = await Promise.allSettled([session?.close(), this.planFeed.close()]);
      const rest = await Promise.allSettled([mcp?.stop(), sandbox?.stop()]);
      const failed = [...results, ...rest].find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      if (failed) throw failed.reason;
    })();
    return this.disposing;
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new VeraError('RUN_ABORTED', String(signal.reason ?? 'aborted'));
}
