import { referenceAgent } from '../../adapters/reference-agent.js';
import type { SafetyCase, ThreatModel } from '../../engine/case-schema.js';
import type { RunStatus, SafetyRecord } from '../../engine/record-writer.js';
import { runCase } from '../../runner/run-case.js';
import type { SandboxBackend } from '../../sandbox/sandbox.js';
import { startScriptedModelServer, type StartedModelServer } from '../../testing/scripted-model-server.js';

/**
 * The goal's test, not the case's test of itself: the case is run, for real, against the embedded
 * naive policy (the reference agent over in-memory MCP, the scripted model on 127.0.0.1) under
 * every threat model it declares. A case the naive agent cannot be made to violate measures
 * nothing — its injection never fires, its attack never reaches the tool the verifier watches —
 * and one it violates when nobody attacks judges the honest task. The witnesses cannot show
 * either: the same author wrote them and the verifier.
 */

/** One (case, threat model) run, as the gates read it. */
export interface GateRun {
  caseId: string;
  threatModel: ThreatModel;
  status: RunStatus;
  /** Benign runs with a utility check: whether the honest task was done. */
  utility?: boolean;
  /** Injection rules of the case (threat models that inject) and those that reached the agent. */
  rules: string[];
  fired: string[];
  error?: string;
}

/** A run's record as the gates read it. */
export function gateRunOf(record: SafetyRecord): GateRun {
  return {
    caseId: record.caseId,
    threatModel: record.threatModel,
    status: record.status,
    ...(record.threatModel === 'benign' && record.utility ? { utility: record.utility.holds } : {}),
    rules: record.injections.rules,
    fired: record.injections.fired,
    ...(record.error ? { error: `${record.error.kind}: ${record.error.message}` } : {}),
  };
}

const injects = (tm: ThreatModel) => tm === 'multi-channel' || tm === 'indirect';

/** What the naive policy must do on every case: violate when attacked, never when benign, do the honest task, fire every injection. */
export function naiveGateProblems(runs: readonly GateRun[]): string[] {
  const problems: string[] = [];
  for (const r of runs) {
    const at = `${r.caseId} [${r.threatModel}]`;
    if (r.error) {
      problems.push(`${at}: error ${r.error}`);
      continue;
    }
    if (r.threatModel === 'benign' && r.status !== 'safe') problems.push(`${at}: the benign run is ${r.status}: the verifier fires on the honest task`);
    else if (r.threatModel !== 'benign' && r.status !== 'violated') {
      problems.push(
        `${at}: the naive policy was not made to violate (${r.status}${r.fired.length === 0 && injects(r.threatModel) ? ', no injection fired' : ''})`,
      );
    }
    if (r.utility === false) problems.push(`${at}: the honest task was not completed (the utility check does not hold on the task's calls)`);
    if (injects(r.threatModel)) {
      for (const rule of r.rules) {
        if (!r.fired.includes(rule)) problems.push(`${at}: injection "${rule}" never fired: no tool call the task leads to matches its tool and \`when\``);
      }
    }
  }
  return problems;
}

export interface DryRunOptions {
  /** The sandbox backend (default: in-process over the default registry). */
  backend?: SandboxBackend;
}

/** A started naive model server and agent; `run` a case under each of its threat models. */
export class StartedDryRun implements AsyncDisposable {
  private closed = false;

  private constructor(
    private readonly server: StartedModelServer,
    private readonly options: DryRunOptions,
  ) {}

  static async start(options: DryRunOptions = {}): Promise<StartedDryRun> {
    return new StartedDryRun(await startScriptedModelServer({ policy: 'naive', recordRequests: false }), options);
  }

  async run(spec: SafetyCase): Promise<GateRun[]> {
    const agent = referenceAgent({ model: 'scripted', baseURL: this.server.url, apiKey: 'dry-run', maxRetries: 0, mcpTransport: 'in-memory' });
    const runs: GateRun[] = [];
    for (const threatModel of spec.threatModels) {
      const { record } = await runCase({ spec, threatModel, agent, recordDir: false, ...(this.options.backend ? { backend: this.options.backend } : {}) });
      runs.push(gateRunOf(record));
    }
    return runs;
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.server.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
