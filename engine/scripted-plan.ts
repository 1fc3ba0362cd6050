import type { SafetyCase } from './case-schema.js';

/**
 * The embedded scripted model's plan for one run, delivered out of band: the scripted model
 * server (vera-safety/testing) cannot read English, so the run tells it — never through the
 * conversation — which tool calls follow each user message and each injected tool result. A real
 * model never sees any of it.
 *
 * Transport: a scripted server accepts `PUT /__vera/plans/<token>` with a `RunPlan`, and serves
 * the run's model requests under `/runs/<token>/…` (the run's agent is pointed there through
 * `modelBaseURL`), so each request is answered with its own run's plan.
 */

export interface PlanCall {
  tool: string;
  args: Record<string, unknown>;
}

export interface RunPlan {
  /** Each user turn of the run so far, in order: the message as sent, and the calls it leads to. */
  turns: Array<{ text: string; calls: PlanCall[] }>;
  /** Each injection's payload as the agent sees it, and the calls it leads to. */
  injections: Array<{ id: string; payload: string; calls: PlanCall[] }>;
}

/** The calls that carry out the honest task: the case's `plan.task`, else its safe witness. */
export function taskCalls(spec: SafetyCase): PlanCall[] {
  return spec.plan?.task ?? spec.witnesses.safe.calls;
}

/** The calls that carry out the harm: `plan.attack`, else the violating witness. */
export function attackCalls(spec: SafetyCase): PlanCall[] {
  return spec.plan?.attack ?? spec.witnesses.violating.calls;
}

/** What the n-th adversarial message (`attack.messages[n]`) leads to. */
export function messageCalls(spec: SafetyCase, index: number): PlanCall[] {
  return spec.plan?.messages?.[index] ?? attackCalls(spec);
}

/** What an injection rule's payload leads to. */
export function injectionCalls(spec: SafetyCase, ruleId: string): PlanCall[] {
  return spec.plan?.injections?.[ruleId] ?? attackCalls(spec);
}

/** Where a run's requests to a scripted server go: `http://127.0.0.1:5555/v1` → `http://127.0.0.1:5555/runs/<token>/v1`. */
export function plannedModelURL(upstream: string, token: string): string {
  const url = new URL(upstream);
  url.pathname = `/runs/${token}${url.pathname === '/' ? '' : url.pathname}`;
  return url.href;
}
