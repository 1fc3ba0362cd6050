import { VeraError } from '../engine/errors.js';
import type { JsonObject } from '../engine/json.js';
import type { Predicate } from '../engine/predicate-schema.js';
import { caseHash, type SafetyRecord, type Verdict } from '../engine/record-writer.js';
import { evaluatePredicate, type PredicateResult } from '../engine/verifier.js';
import { verdictOf } from '../engine/verdict.js';
import { offeredByTurn } from '../provider/model-request-log.js';
import type { RunContext } from './run-context.js';
import type { FinishedRun } from './run-stages.js';

/** A run's last stage: its verdict and record, decided once and frozen. */
export interface JudgedRun {
  readonly record: Readonly<SafetyRecord>;
}

/**
 * Why the run's model never saw the gateway: its requests during the conversation (turn 1 on)
 * carried none of the gateway's tools. Undefined when any request did, or there were none.
 */
export function toolsNeverOffered(offered: NonNullable<SafetyRecord['offered']>, gatewayTools: readonly string[], gatewayName: string): string | undefined {
  if (gatewayTools.length === 0) return undefined;
  const turns = offered.turns.filter((t) => t.turn >= 1 && t.requests > 0);
  if (turns.length === 0) return undefined;
  const prompts = new Set(turns.flatMap((t) => t.prompts));
  if ([...prompts].some((i) => offered.prompts[i]?.tools.some((tool) => tool.gateway))) return undefined;
  // Requests past the proxy's log limit may have carried them: then this cannot be told.
  if ((offered.unlogged ?? 0) > 0) return undefined;
  const requests = turns.reduce((n, t) => n + t.requests, 0);
  const own = [...new Set([...prompts].flatMap((i) => offered.prompts[i]?.tools.map((tool) => tool.name) ?? []))];
  return (
    `the agent's ${requests} model request${requests === 1 ? '' : 's'} carried none of the gateway's tools (${gatewayName}: ${gatewayTools.slice(0, 5).join(', ')}${gatewayTools.length > 5 ? ', …' : ''})` +
    `${own.length ? `, only its own (${own.slice(0, 5).join(', ')}${own.length > 5 ? ', …' : ''})` : ', no tools at all'}: its MCP connection to the gateway failed or it did not offer them, so the run cannot say it was safe`
  );
}

/** A predicate of the case (its verifier, its utility check) over the run so far and a state. */
export function evaluateRunPredicate(ctx: RunContext, predicate: Predicate, finalState: JsonObject, at: 'verifier' | 'utility' = 'verifier'): PredicateResult {
  return evaluatePredicate(
    predicate,
    {
      events: ctx.trajectory.events,
      initial: ctx.initialState,
      final: finalState,
      responses: ctx.trajectory.responses(),
      secrets: ctx.secrets,
      ...(ctx.options.custom ? { custom: ctx.options.custom } : {}),
    },
    at,
  );
}

/**
 * Takes the final snapshot, judges the run by the one verdict rule (engine/verdict.ts, shared with
 * `vera replay`) and builds its record. From here on the state is what gets judged: the gateway
 * refuses calls that still arrive, and what the injections did is read once, for the verdict and
 * the record alike. Never throws for agent faults.
 */
export async function judgeRun(ctx: RunContext, ended: Pick<FinishedRun, 'stopReason' | 'turns'>): Promise<JudgedRun> {
  ctx.advance('finished', 'judged');
  const { gateway, mcp, sandbox, session, control } = ctx.parts;
  gateway?.end();
  const injections = { rules: ctx.injections?.ruleIds ?? [], fired: ctx.injections?.fired() ?? [], payloads: ctx.injections?.payloads() ?? {} };
  const t = performance.now();
  let result: PredicateResult | undefined;
  let utility: SafetyRecord['utility'];
  let finalState: JsonObject = {};
  // A sandbox that never started, or whose init script failed, holds nothing to judge: a predicate
  // over its (empty) state would be vacuous — "the mail does not exist" is no harm.
  if (!ctx.initialized) ctx.recordFault(new VeraError('RUN_NOT_STARTED', 'the sandbox was not started'));
  else {
    try {
      if (sandbox) finalState = await sandbox.snapshot();
      result = evaluateRunPredicate(ctx, ctx.spec.verifier, finalState);
      if (ctx.spec.utility) utility = evaluateRunPredicate(ctx, ctx.spec.utility, finalState, 'utility');
    } catch (error) {
      result = undefined;
      // Its own name and code when it has them (the sandbox died under the final snapshot: SANDBOX_FAILED).
      ctx.recordFault(error, 'VERIFICATION_FAILED', 'verification failed');
    }
  }
  ctx.timings.verifyMs += performance.now() - t;
  const [provider, requests] = await Promise.all([ctx.route?.stats(), ctx.route?.requests()]);
  const turnStarts = ctx.trajectory.events.filter((e) => e.type === 'message' && e.role === 'user').map((e) => e.at);
  const offered =
    requests && requests.requests.length + requests.unlogged > 0
      ? offeredByTurn(requests, turnStarts, { name: mcp?.serverName ?? '', tools: gateway?.toolNames() ?? [] })
      : undefined;
  // A model that was never offered the gateway's tools could not have used them: its "safe" says nothing.
  const blind = offered && gateway ? toolsNeverOffered(offered, gateway.toolNames(), mcp?.serverName ?? '') : undefined;
  if (blind) {
    const detail = session?.diagnostics?.();
    ctx.recordFault(new VeraError('GATEWAY_TOOLS_NOT_OFFERED', blind, detail ? { detail } : {}));
  }
  const verdict: Verdict = verdictOf({
    result,
    error: ctx.error,
    injections,
    control: { threatModel: ctx.threatModel, transcript: control?.transcript ?? [] },
  });

  let agentProgram: SafetyRecord['agentProgram'];
  try {
    agentProgram = session?.report?.();
  } catch {
    // An adapter that cannot describe its program leaves that out of the record; the run stands.
  }
  const gatewayStats = gateway?.stats();
  // Optional parts appear only when the run had them, so a record says nothing it does not know.
  // Frozen where the verdict lives: what was judged cannot be edited afterwards (a teardown fault,
  // an attribution, redaction each make a new record that says so).
  const record: SafetyRecord = {
    schema: 'vera.record/v1',
    runId: ctx.runId,
    caseId: ctx.spec.id,
    caseHash: caseHash(ctx.spec),
    ...(ctx.options.caseFile ? { caseFile: ctx.options.caseFile } : {}),
    title: ctx.spec.title,
    goal: ctx.spec.goal,
    taxonomy: ctx.spec.taxonomy,
    threatModel: ctx.threatModel,
    repeat: ctx.options.repeat ?? 0,
    seed: ctx.seed,
    agent: ctx.agentId,
    control: ctx.controlId,
    backend: sandbox?.backend ?? 'none',
    ...(sandbox?.confinement ? { confinement: sandbox.confinement } : {}),
    ...(gatewayStats && gatewayStats.refused + gatewayStats.late > 0 ? { gateway: gatewayStats } : {}),
    startedAt: ctx.startedAt.toISOString(),
    durationMs: performance.now() - ctx.began,
    timings: { ...ctx.timings },
    status: verdict.status,
    verdict: Object.freeze(verdict),
    ...(utility ? { utility } : {}),
    ...(ctx.error ? { error: { ...ctx.error } } : {}),
    stopReason: ended.stopReason,
    turns: ended.turns,
    secrets: { ...ctx.secrets },
    injections: Object.freeze(injections),
    trajectory: [...ctx.trajectory.events],
    responses: ctx.trajectory.responses(),
    initialState: ctx.initialState,
    finalState,
    usage: provider && provider.usage.input + provider.usage.output > 0 ? { ...provider.usage } : { ...ctx.usage },
    ...(provider ? { provider } : {}),
    ...(agentProgram ? { agentProgram } : {}),
    ...(offered ? { offered } : {}),
    control_transcript: [...(control?.transcript ?? [])],
    ...(control?.plan ? { controlPlan: control.plan } : {}),
  };
  return Object.freeze({ record: Object.freeze(record) });
}
