import { environmentsOf } from '../engine/case-helpers.js';
import type { SafetyCase, Witness } from '../engine/case-schema.js';
import type { CustomCheck } from '../engine/verifier.js';
import type { AnyEnvironmentDefinition } from '../sandbox/environment.js';
import { loadBuiltinEnvironment } from '../sandbox/environments/builtin-loaders.js';
import type { RouteEquivalence } from '../sandbox/route-equivalence.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';
import { evaluateWitness, type WitnessKind } from './witness.js';

/**
 * Verifier robustness: is the verifier proven on the harm, or on the one route its witnesses take?
 * Every call of every witness (violating, safe, near misses) is replaced in turn by each route the
 * owning environment declares for that tool; the result is replayed for real and must be judged
 * as the witness was — violated stays violated, safe stays safe. The share judged the same is the
 * case's robustness; each miss names the route that caused it.
 */

export interface RouteOutcome {
  witness: Exclude<WitnessKind, 'do-nothing'>;
  /** Which near-miss witness. */
  index?: number;
  /** 1-based number of the call that was rerouted. */
  call: number;
  tool: string;
  equivalence: string;
  route: string;
  expected: 'violated' | 'safe';
  /** What the verifier said; `failed` when the rerouted calls failed (the route says nothing then). */
  got: 'violated' | 'safe' | 'failed' | 'error';
  /** The verifier's evidence (for a miss), or the failing calls. */
  why: string;
}

export interface RobustnessReport {
  caseId: string;
  /** Routes that applied and ran: the denominator. */
  judged: number;
  same: number;
  /** same ÷ judged; undefined when no route applies to any witness call. */
  share: number | undefined;
  misses: RouteOutcome[];
  /** Routes whose calls failed (not counted): a route that breaks says nothing about the verifier. */
  failed: RouteOutcome[];
  /** Routes the case declares another act (`robustness.notTheSameAct`): not tried, each with its reason. */
  notTheSameAct: Array<{ route: string; reason: string; declared: boolean }>;
}

export interface RobustnessOptions {
  /** The project's own environments (a name here wins over a built-in one). */
  environments?: Record<string, AnyEnvironmentDefinition>;
  backend?: SandboxBackend;
  custom?: Record<string, CustomCheck>;
}

/** The routes the case's environments declare, by tool name. */
export async function equivalencesOf(spec: SafetyCase, options: RobustnessOptions = {}): Promise<Map<string, RouteEquivalence[]>> {
  const byTool = new Map<string, RouteEquivalence[]>();
  for (const name of environmentsOf(spec)) {
    const def = options.environments?.[name] ?? (await loadBuiltinEnvironment(name));
    for (const e of def?.equivalences ?? []) byTool.set(e.tool, [...(byTool.get(e.tool) ?? []), e]);
  }
  return byTool;
}

export async function checkRobustness(spec: SafetyCase, options: RobustnessOptions = {}): Promise<RobustnessReport> {
  const byTool = await equivalencesOf(spec, options);
  const excluded = spec.robustness?.notTheSameAct ?? {};
  const declared = new Set([...byTool.values()].flat().map((e) => e.name));
  const witnesses: Array<{ kind: RouteOutcome['witness']; index?: number; witness: Witness; expected: RouteOutcome['expected'] }> = [
    { kind: 'violating', witness: spec.witnesses.violating, expected: 'violated' },
    { kind: 'safe', witness: spec.witnesses.safe, expected: 'safe' },
    ...spec.witnesses.nearMiss.map((witness, index) => ({ kind: 'near-miss' as const, index, witness, expected: 'safe' as const })),
  ];
  // Each witness once as written: which of its commands already exit non-zero.
  const plain = await Promise.all(witnesses.map((w) => evaluateWitness(spec, w.witness, w.kind, options)));
  const jobs: Array<() => Promise<RouteOutcome | undefined>> = [];
  for (const [n, w] of witnesses.entries()) {
    for (const [at, call] of w.witness.calls.entries()) {
      for (const equivalence of byTool.get(call.tool) ?? []) {
        if (equivalence.only === 'violating' && w.kind !== 'violating') continue;
        if (Object.hasOwn(excluded, equivalence.name)) continue;
        jobs.push(() =>
          evaluateWitness(spec, w.witness, w.kind, { ...options, route: { at, equivalence, originalExitedNonZero: plain[n]!.nonZeroExits.includes(at) } }).then(
            (result) => {
              if (!result.rerouted?.calls) return undefined; // the route does not apply here
              const base = {
                witness: w.kind,
                ...(w.index !== undefined ? { index: w.index } : {}),
                call: at + 1,
                tool: call.tool,
                equivalence: equivalence.name,
                route: equivalence.route,
                expected: w.expected,
              };
              if (result.errors.length > 0) return { ...base, got: 'error' as const, why: result.errors.join('; ') };
              if (result.failedCalls.length > 0) return { ...base, got: 'failed' as const, why: result.failedCalls.join('; ') };
              const got = result.verifier.holds ? ('violated' as const) : ('safe' as const);
              return { ...base, got, why: result.verifier.evidence.map((e) => e.message).join('; ') };
            },
          ),
        );
      }
    }
  }
  const outcomes = (await inBatches(jobs, 8)).filter((o): o is RouteOutcome => o !== undefined);
  const failed = outcomes.filter((o) => o.got === 'failed');
  const judged = outcomes.filter((o) => o.got !== 'failed');
  const misses = judged.filter((o) => o.got !== o.expected);
  return {
    caseId: spec.id,
    judged: judged.length,
    same: judged.length - misses.length,
    share: judged.length === 0 ? undefined : (judged.length - misses.length) / judged.length,
    misses,
    failed,
    // `declared: false` — the case names a route its environments do not declare (a typo): an error of the case.
    notTheSameAct: Object.entries(excluded).map(([route, reason]) => ({ route, reason, declared: declared.has(route) })),
  };
}

/** The jobs run `width` at a time (each starts a sandbox), results in job order. */
async function inBatches<T>(jobs: ReadonlyArray<() => Promise<T>>, width: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < jobs.length; i += width) out.push(...(await Promise.all(jobs.slice(i, i + width).map((job) => job()))));
  return out;
}

/** "violating witness, call 2" / "near-miss witness 1, call 1". */
export function describeRouteOutcome(o: RouteOutcome): string {
  const which = o.witness === 'near-miss' ? `near-miss witness ${o.index}` : `${o.witness} witness`;
  return `${which}, call ${o.call} (${o.tool}) by ${o.equivalence} — ${o.route}: expected ${o.expected}, judged ${o.got}: ${o.why}`;
}
