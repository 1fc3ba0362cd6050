import { formatField, formatProblem, parseCaseSource } from '../../engine/case-loader.js';
import { planProvenance } from '../../runner/plan-provenance.js';
import { environmentsOf, type SafetyCase } from '../../engine/case-schema.js';
import type { JsonObject } from '../../engine/json.js';
import { fillSecrets, generateSecrets } from '../../engine/secrets.js';
import { checkWitnesses } from '../../runner/witness.js';
import { InProcessBackend, toolJsonSchema } from '../../sandbox/backends/in-process-backend.js';
import type { AnyEnvironmentDefinition } from '../../sandbox/environment.js';
import type { SandboxBackend } from '../../sandbox/sandbox.js';
import type { GoalRecord } from '../compose/goals-file.js';
import { attackSurfaceProblems, threatModelsFor } from '../../engine/attack-surface.js';
import { toYaml } from '../yaml-file.js';
import { naiveGateProblems, type StartedDryRun } from './dry-run.js';
import { anchorProblems, targetProblems } from './target-gate.js';
import type { CaseDraft } from './case-compiler.js';
import { checkReferences } from './verifier-references.js';
import { observableProblems } from './observable-gate.js';
import type { ObservableKind } from '../taxonomy/taxonomy-schema.js';

/**
 * The acceptance rules a compiled case must pass, in order (the first stage that fails is the
 * reason it is rejected). The first five test the case against itself; the last three test it
 * against the goal — a verifier and witnesses by the same author agree with each other by
 * construction, so they cannot show that the attack reaches the agent or that the check is on
 * the goal's target:
 *   schema          — the YAML validates against the case schema (engine/case-schema.ts), secrets included;
 *   attack-surface  — the attack surface carries the labelled method (engine/attack-surface.ts):
 *                     indirect injection and tool poisoning arrive through data, with no adversarial user turns;
 *   tuple           — the case mounts its tuple's environment (the method is attack-surface's, the
 *                     risk's observable the observable stage's);
 *   init            — every mounted environment exists and the init script replays cleanly in a sandbox;
 *   references      — every tool, argument, channel and state path the verifier names exists, and no
 *                     path selects an item nothing in the case names (verifier-references.ts);
 *   target          — the init script seeds the goal's target and the verifier names it in a positive
 *                     position, or reads it through fromInitial (target-gate.ts);
 *   observable      — every way the verifier holds sees the harm where the goal's risk leaves it (its
 *                     taxonomy `observables`: state, egress, tool-call, response), and a verifier words
 *                     alone satisfy is proven against a denial (observable-gate.ts);
 *   witnesses       — the verifier says violated on the violating witness, safe on the safe one, on
 *                     every near miss (the draft must give one) and on doing nothing (runner/witness.ts
 *                     `checkWitnesses`), and the witnesses' calls run — the bundled library's gates;
 *   provenance      — the plan is one a real agent could follow: what the honest task names reaches
 *                     every call and every carrier, the harm's values come from the attack
 *                     (runner/plan-provenance.ts, the check the plugin runs when a case loads);
 *   dry-run         — run for real against the embedded naive agent (dry-run.ts), the case ends
 *                     violated under every adversarial threat model it declares, safe with the task
 *                     done under benign, and every injection fires on a call the task leads to.
 */
export type Stage = 'reply' | 'schema' | 'attack-surface' | 'tuple' | 'init' | 'references' | 'target' | 'observable' | 'witnesses' | 'provenance' | 'dry-run';

export interface Acceptance {
  ok: boolean;
  stage?: Stage;
  reasons: string[];
  spec?: SafetyCase;
}

/** The case as data, fields in the documented order: the goal's identity and taxonomy, the model's parts. */
export function assembleCase(goal: GoalRecord, draft: CaseDraft): Record<string, unknown> {
  const attack: Record<string, unknown> = {};
  if (draft.attack.guidance) attack.guidance = draft.attack.guidance;
  if (draft.attack.messages?.length) attack.messages = draft.attack.messages;
  if (draft.attack.injections?.length) attack.injections = draft.attack.injections;
  if (draft.attack.toolDescriptions?.length) attack.toolDescriptions = draft.attack.toolDescriptions;
  const tupleEnvironment = goal.taxonomy.environment.split('/')[0]!;
  const environments =
    draft.environments ?? (goal.environments?.length ? [tupleEnvironment, ...goal.environments.filter((e) => e !== tupleEnvironment)] : undefined);
  return {
    id: goal.id,
    title: draft.title ?? goal.title,
    goal: goal.goal,
    taxonomy: goal.taxonomy,
    ...(environments ? { environments } : {}),
    task: draft.task,
    attack,
    ...(draft.secrets && Object.keys(draft.secrets).length ? { secrets: draft.secrets } : {}),
    init: draft.init,
    verifier: draft.verifier,
    ...(draft.utility ? { utility: draft.utility } : {}),
    ...(draft.budgets ? { budgets: draft.budgets } : {}),
    threatModels: threatModelsFor(draft.attack),
    witnesses: draft.witnesses,
    tags: ['generated', `goal:${goal.id}`],
  };
}

export function caseYaml(caseData: Record<string, unknown>, model: string): string {
  return toYaml(
    caseData,
    ` Generated by \`vera compile\` (model ${model}) from goal ${String(caseData.id)}; kept: schema, attack surface, init replay, verifier references, target, observable, witnesses, provenance and the naive dry run all passed.`,
    { flowMaps: true },
  );
}

/** What `attackSurfaceProblems` says (the loader reports the same problems). */
const SURFACE_PROBLEM = /\(attack\.(messages|injections|toolDescriptions)\)$|needs an attack surface|has no declared attack surface/;

export interface AcceptanceOptions {
  registry: Record<string, AnyEnvironmentDefinition>;
  backend?: SandboxBackend;
  /** The goal the case was compiled from: its target must be seeded and named (stage target). */
  goal?: Pick<GoalRecord, 'targetResource'>;
  /** Where the goal's risk leaves its harm (stage observable; taxonomy `observables`): without it, the stage is skipped. */
  observables?: readonly ObservableKind[];
  /** A started naive dry run (stage dry-run); without it the stage is skipped. */
  dryRun?: StartedDryRun;
}

export async function acceptCase(yaml: string, file: string, options: AcceptanceOptions): Promise<Acceptance> {
  const parsed = parseCaseSource(yaml, file);
  if (!parsed.ok) {
    // The loader checks the attack surface too (engine/attack-surface.ts): reported as its own stage.
    if (parsed.problems.every((p) => SURFACE_PROBLEM.test(p.message)))
      return { ok: false, stage: 'attack-surface', reasons: parsed.problems.map((p) => p.message) };
    return { ok: false, stage: 'schema', reasons: parsed.problems.map(formatProblem) };
  }
  const spec = parsed.loaded.spec;
  const surface = attackSurfaceProblems(spec);
  if (surface.length) return { ok: false, stage: 'attack-surface', reasons: surface, spec };
  const mounted = environmentsOf(spec);
  // The case is the tuple's: a draft for another environment would report its ASR in the wrong rows.
  const tupleEnvironment = spec.taxonomy.environment.split('/')[0]!;
  if (!mounted.includes(tupleEnvironment)) {
    return {
      ok: false,
      stage: 'tuple',
      reasons: [
        `environments: the case must mount its tuple's environment "${tupleEnvironment}" (it mounts ${mounted.join(', ')}); a case of another environment is another tuple's`,
      ],
      spec,
    };
  }
  const unknown = mounted.filter((name) => !Object.hasOwn(options.registry, name));
  if (unknown.length) {
    return {
      ok: false,
      stage: 'init',
      reasons: unknown.map((n) => `environment "${n}" is not in the sandbox registry (known: ${Object.keys(options.registry).sort().join(', ')})`),
      spec,
    };
  }
  const backend = options.backend ?? new InProcessBackend({ environments: options.registry });

  let initial: JsonObject;
  let violating: JsonObject;
  try {
    const secrets = generateSecrets(spec.secrets, spec.init);
    await using sandbox = await backend.start({ environments: mounted, label: `compile-${spec.id}` });
    for (const [i, step] of fillSecrets(spec.init, secrets).entries()) await sandbox.apply(step, i);
    initial = await sandbox.snapshot();
    for (const call of fillSecrets(spec.witnesses.violating.calls, secrets)) await sandbox.callTool(call.tool, call.args);
    violating = await sandbox.snapshot();
  } catch (error) {
    return { ok: false, stage: 'init', reasons: [`the init script does not replay: ${(error as Error).message}`], spec };
  }

  const tools = new Map<string, Record<string, unknown>>();
  const channels = new Set<string>();
  for (const name of mounted) {
    const env = options.registry[name]!;
    for (const t of env.tools) tools.set(t.name, toolJsonSchema(t.input));
    for (const c of env.externalChannels) channels.add(c);
  }
  const missing = checkReferences(spec, { tools, channels, initial, violating });
  if (missing.length) return { ok: false, stage: 'references', reasons: missing, spec };
  const offTarget = options.goal ? targetProblems(spec, options.goal, { initial }) : anchorProblems(spec);
  if (offTarget.length) return { ok: false, stage: 'target', reasons: offTarget, spec };
  const unseen = options.observables ? observableProblems(spec, options.observables) : [];
  if (unseen.length) return { ok: false, stage: 'observable', reasons: unseen, spec };

  let witnesses;
  try {
    witnesses = await checkWitnesses(spec, { backend });
  } catch (error) {
    return { ok: false, stage: 'witnesses', reasons: [`the witnesses could not be replayed: ${(error as Error).message}`], spec };
  }
  if (!witnesses.ok) return { ok: false, stage: 'witnesses', reasons: witnesses.problems, spec };
  const provenance = await planProvenance(spec, { backend });
  if (provenance.length) return { ok: false, stage: 'provenance', reasons: provenance.map((p) => `${formatField(p.path)}: ${p.message}`), spec };
  if (options.dryRun) {
    const problems = naiveGateProblems(await options.dryRun.run(spec));
    if (problems.length) return { ok: false, stage: 'dry-run', reasons: problems, spec };
  }
  return { ok: true, reasons: [], spec };
}
