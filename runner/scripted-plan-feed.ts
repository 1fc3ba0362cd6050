import { randomBytes } from 'node:crypto';
import { fillSecrets, type Secrets } from '../engine/secrets.js';
import { plannedModelURL, type PlanCall, type RunPlan } from '../engine/scripted-plan.js';
import { planSinksInProcess } from '../provider/scripted-plan-sinks.js';

/**
 * One run's plan for the scripted model servers it talks to (see `engine/scripted-plan.ts`, which
 * holds the plan's shape and does no I/O; the delivery is here, in the orchestration): routes the
 * agent's requests to a scripted server under the run's token, and keeps the server told what
 * follows each user turn and each injection — before the turn is sent, never in its text. Runs
 * that talk to no scripted server (a real model) push nothing.
 */
export class ScriptedPlanFeed {
  readonly token = randomBytes(9).toString('base64url');
  private readonly origins: Set<string>;
  /** Origins this run's clients were actually routed to: only those are told. */
  private readonly used = new Set<string>();
  private readonly plan: RunPlan = { turns: [], injections: [] };

  constructor(
    known: readonly string[],
    private readonly secrets: Secrets,
  ) {
    this.origins = new Set([...known, ...planSinksInProcess().keys()].map((o) => new URL(o).origin));
  }

  /** The URL a client of this run uses for `upstream`: under the run's token when it is a scripted server. */
  urlFor(upstream: string): string {
    let origin: string;
    try {
      origin = new URL(upstream).origin;
    } catch {
      return upstream;
    }
    if (!this.origins.has(origin)) return upstream;
    this.used.add(origin);
    return plannedModelURL(upstream, this.token);
  }

  get active(): boolean {
    return this.used.size > 0;
  }

  /** The injections of the run (payloads as the agent will see them, secrets filled) and their calls. */
  setInjections(entries: Array<{ id: string; payload: string; calls: PlanCall[] }>): void {
    this.plan.injections = entries.map((e) => ({ id: e.id, payload: e.payload, calls: this.filled(e.calls) }));
  }

  setPayload(id: string, payload: string): void {
    const entry = this.plan.injections.find((e) => e.id === id);
    if (entry) entry.payload = payload;
  }

  /** The next user turn and what it leads to; sent to the servers before the turn is. */
  async addTurn(text: string, calls: PlanCall[]): Promise<void> {
    this.plan.turns.push({ text, calls: this.filled(calls) });
    await this.push();
  }

  async push(): Promise<void> {
    await Promise.all([...this.used].map((origin) => pushPlan(origin, this.token, this.plan)));
  }

  async close(): Promise<void> {
    await Promise.all([...this.used].map((origin) => dropPlan(origin, this.token)));
  }

  private filled(calls: PlanCall[]): PlanCall[] {
    return calls.map((c) => ({ tool: c.tool, args: fillSecrets(c.args, this.secrets) }));
  }
}

/** Sends a run's plan to a scripted server (`PUT /__vera/plans/<token>`, or a call when it lives in this process). */
async function pushPlan(origin: string, token: string, plan: RunPlan): Promise<void> {
  const sink = planSinksInProcess().get(origin);
  if (sink) {
    // A copy, as the request would carry: the run goes on changing its own.
    sink.set(token, structuredClone(plan));
    return;
  }
  const res = await fetch(`${origin}/__vera/plans/${token}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(plan) });
  if (!res.ok) throw new Error(`the scripted model at ${origin} refused the run's plan: HTTP ${res.status} ${await res.text()}`);
}

async function dropPlan(origin: string, token: string): Promise<void> {
  const sink = planSinksInProcess().get(origin);
  if (sink) return sink.drop(token);
  await fetch(`${origin}/__vera/plans/${token}`, { method: 'DELETE' }).catch(() => {});
}
