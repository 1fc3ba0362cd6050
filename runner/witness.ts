import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { ToolGateway } from '../sandbox/gateway/tool-gateway.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';
import type { RouteCall, RouteEquivalence, RouteStep } from '../sandbox/route-equivalence.js';
import type { JsonValue } from '../engine/json.js';
import { environmentsOf } from '../engine/case-helpers.js';
import type { SafetyCase, Witness } from '../engine/case-schema.js';
import { fillSecrets, generateSecrets } from '../engine/secrets.js';
import { Trajectory } from '../engine/trajectory.js';
import { initialOperandProblems } from '../engine/predicate-operands.js';
import { evaluatePredicate, VerifierError, type CustomCheck, type PredicateResult, type VerificationInput } from '../engine/verifier.js';

export type WitnessKind = 'violating' | 'safe' | 'near-miss' | 'do-nothing';

export interface WitnessResult {
  kind: WitnessKind;
  /** Which near-miss witness (its position in `witnesses.nearMiss`). */
  index?: number;
  verifier: PredicateResult;
  utility?: PredicateResult;
  /** Witness calls that failed (a witness that cannot run says nothing). */
  failedCalls: string[];
  /** The sandbox before and after the witness (what a load-time check of the verifier's paths reads). */
  snapshots: { initial: unknown; final: unknown };
  /**
   * Why the case cannot be judged on this witness: a verifier error (a `fromInitial` path that
   * names nothing in the initial snapshot, an aggregate over text), or an injection condition
   * whose `fromInitial` operand names nothing. A real run would end as an error.
   */
  errors: string[];
  /** 0-based numbers of the witness calls whose result says they exited non-zero (a shell command). */
  nonZeroExits: number[];
  /** With `route`: the calls that replaced the witness's call, or undefined where the route did not apply. */
  rerouted?: { calls: RouteStep[] | undefined };
}

/** Replay the witness with its call number `at` (0-based) taken by another route. */
export interface WitnessRoute {
  at: number;
  equivalence: RouteEquivalence;
  /** The witness's own call exited non-zero: the route's doing so too is no failure of the route. */
  originalExitedNonZero?: boolean;
}

export interface WitnessCheck {
  caseId: string;
  ok: boolean;
  problems: string[];
  results: WitnessResult[];
}

/**
 * Replays a hand-written trajectory against a freshly initialised sandbox and judges it, exactly
 * as a real run would be judged (same gateway recording, same snapshots, fresh secrets).
 */
export async function evaluateWitness(
  spec: SafetyCase,
  witness: Witness,
  kind: WitnessKind,
  options: { backend?: SandboxBackend; custom?: Record<string, CustomCheck>; route?: WitnessRoute } = {},
): Promise<WitnessResult> {
  const backend = options.backend ?? new InProcessBackend();
  const secrets = generateSecrets(spec.secrets, spec.init);
  // No `await using`: this module is loaded natively by Node 20 (the plugin in the config process).
  const sandbox = await backend.start({ environments: environmentsOf(spec), label: `${spec.id}-${kind}` });
  try {
    for (const [i, step] of fillSecrets(spec.init, secrets).entries()) await sandbox.apply(step, i);
    const initial = await sandbox.snapshot();
    const trajectory = new Trajectory();
    const gateway = new ToolGateway({ sandbox, trajectory });
    trajectory.beginTurn();
    trajectory.add({ type: 'message', role: 'user', text: spec.task });
    const failedCalls: string[] = [];
    let rerouted: WitnessResult['rerouted'];
    const nonZeroExits: number[] = [];
    for (const [i, call] of fillSecrets(witness.calls, secrets).entries()) {
      let calls: RouteStep[] = [call];
      if (options.route?.at === i) {
        // The route sees the secrets filled in (an encoding of the value, not of its placeholder)
        // and the sandbox as it is at that point of the trajectory.
        const before = (await sandbox.snapshot()) as Record<string, JsonValue>;
        let alternative: RouteStep[] | undefined;
        try {
          alternative = options.route.equivalence.rewrite(call, { before, secrets: Object.values(secrets) });
        } catch (error) {
          // A route that throws is a bug of the route, reported as its failure, never a crash of the check.
          alternative = [];
          failedCalls.push(`${options.route.equivalence.name} could not rewrite the call: ${(error as Error).message}`);
        }
        rerouted = { calls: alternative };
        if (!alternative) break;
        calls = alternative;
      }
      const isRoute = options.route?.at === i;
      // Results are parsed only where a later step of a route reads them, or a command's exit code is in them.
      const needsResults = calls.some((step) => typeof step === 'function');
      const results: unknown[] = [];
      for (const step of calls) {
        const c: RouteCall = typeof step === 'function' ? step(results) : step;
        const reply = await gateway.call(c.tool, c.args);
        if (needsResults) results.push(parsedResult(reply.text));
        const nonZero = reply.text.includes('"exitCode"') && exitedNonZero(parsedResult(reply.text));
        if (nonZero && !nonZeroExits.includes(i)) nonZeroExits.push(i);
        if (reply.isError) failedCalls.push(`${c.tool}: ${reply.text}`);
        // A rerouted command that exits non-zero (where the witness's own did not) did not do what it did.
        else if (isRoute && nonZero && !options.route?.originalExitedNonZero) failedCalls.push(`${c.tool}: ${reply.text.slice(0, 300)}`);
      }
    }
    for (const text of fillSecrets(witness.responses, secrets)) trajectory.add({ type: 'message', role: 'assistant', text });
    const final = await sandbox.snapshot();
    const input = {
      events: trajectory.events,
      initial,
      final,
      responses: trajectory.responses(),
      secrets,
      ...(options.custom ? { custom: options.custom } : {}),
    };
    const errors: string[] = [];
    for (const problem of initialOperandProblems(spec.attack.injections, 'attack.injections', { secrets, initial })) {
      errors.push(`${problem.at}: ${problem.message}`);
    }
    const result: WitnessResult = {
      kind,
      verifier: evaluateWitnessPredicate(spec.verifier, input, 'verifier', errors),
      failedCalls,
      nonZeroExits,
      errors,
      snapshots: { initial, final },
      ...(rerouted ? { rerouted } : {}),
    };
    if (spec.utility) result.utility = evaluateWitnessPredicate(spec.utility, input, 'utility', errors);
    return result;
  } finally {
    await sandbox.stop();
  }
}

function parsedResult(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A command result (`{ exitCode: 2, … }`) that says the command failed. */
function exitedNonZero(result: unknown): boolean {
  const exitCode = result && typeof result === 'object' ? (result as { exitCode?: unknown }).exitCode : undefined;
  return typeof exitCode === 'number' && exitCode !== 0;
}

/** A predicate that cannot be evaluated judges nothing: its error is kept, the result says "does not hold". */
function evaluateWitnessPredicate(p: SafetyCase['verifier'], input: VerificationInput, at: string, errors: string[]): PredicateResult {
  try {
    return evaluatePredicate(p, input, at);
  } catch (error) {
    if (!(error instanceof VerifierError)) throw error;
    errors.push(error.message);
    return { holds: false, evidence: [{ at: error.at, holds: false, message: `cannot be judged: ${error.message}` }] };
  }
}

/**
 * The three checks every case must pass: violated on its violating witness, safe on its safe
 * witness, and safe when the agent does nothing — a verifier that already holds on the initial
 * state would call an idle agent unsafe. Where a utility predicate exists, the safe witness must
 * complete the task and doing nothing must not.
 */
export async function checkWitnesses(
  spec: SafetyCase,
  options: { backend?: SandboxBackend; custom?: Record<string, CustomCheck> } = {},
): Promise<WitnessCheck> {
  const results = await Promise.all([
    evaluateWitness(spec, spec.witnesses.violating, 'violating', options),
    evaluateWitness(spec, spec.witnesses.safe, 'safe', options),
    evaluateWitness(spec, { calls: [], responses: [] }, 'do-nothing', options),
    ...spec.witnesses.nearMiss.map((w, index) => evaluateWitness(spec, w, 'near-miss', options).then((r) => ({ ...r, index }))),
  ]);
  const [violating, safe, idle, ...nearMisses] = results as [WitnessResult, WitnessResult, WitnessResult, ...WitnessResult[]];
  const problems: string[] = [];
  const why = (r: PredicateResult) => r.evidence.map((e) => e.message).join('; ');
  // An unjudgeable case fails on that alone: every verdict below would be an artefact of the error.
  const errors = [...new Set(results.flatMap((r) => r.errors))];
  if (errors.length > 0) {
    problems.push(...errors.map((e) => `the case cannot be judged (a run would end as an error): ${e}`));
    return { caseId: spec.id, ok: false, problems, results };
  }
  if (!violating.verifier.holds) problems.push(`the verifier says safe on the violating witness: ${why(violating.verifier)}`);
  if (safe.verifier.holds) problems.push(`the verifier says violated on the safe witness: ${why(safe.verifier)}`);
  if (idle.verifier.holds) problems.push(`the verifier already holds when the agent does nothing: ${why(idle.verifier)}`);
  for (const r of nearMisses) {
    // The point of a near miss: it comes close, and a verifier that is too broad calls it violated.
    if (r.verifier.holds) problems.push(`the verifier says violated on near-miss witness ${r.index}: ${why(r.verifier)}`);
  }
  for (const r of [violating, safe, ...nearMisses]) {
    const which = r.kind === 'near-miss' ? `near-miss witness ${r.index}` : `${r.kind} witness`;
    if (r.failedCalls.length) problems.push(`the ${which} has failing calls: ${r.failedCalls.join('; ')}`);
  }
  if (spec.utility) {
    if (!safe.utility?.holds) problems.push(`the utility check fails on the safe witness: ${why(safe.utility!)}`);
    if (idle.utility?.holds) problems.push(`the utility check holds when the agent does nothing: ${why(idle.utility)}`);
  }
  return { caseId: spec.id, ok: problems.length === 0, problems, results };
}
