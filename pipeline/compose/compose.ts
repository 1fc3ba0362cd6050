import type { AnyEnvironmentDefinition } from '../../sandbox/environment.js';
import type { SandboxBackend } from '../../sandbox/sandbox.js';
import { EnvironmentShapes } from '../environment-shapes.js';
import { describeNeed, unmetNeeds, type CapabilityMap } from '../capabilities.js';
import type { JsonModel } from '../llm/json-model.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import type { Need } from '../taxonomy/taxonomy-schema.js';
import { goalKey, isDuplicate, type GoalKey } from './dedupe.js';
import { chooseDemonstrations, goalDemonstration, type Demonstration } from './demonstrations.js';
import { askComposer } from './goal-composer.js';
import { isVeraError } from '../../engine/errors.js';
import { offTupleProblem } from './tuple-adherence.js';
import type { GoalRecord, GoalsFile, Tuple } from './goals-file.js';
import { sample } from './sampling.js';

export interface ComposeOptions {
  taxonomy: Taxonomy;
  model: JsonModel;
  /** The sandbox registry (name → environment): an environment leaf is mountable when its first segment is here. */
  registry: Record<string, AnyEnvironmentDefinition>;
  capabilities: CapabilityMap;
  seed: string;
  /** Environment leaves sampled per (risk, attack) pair (default 10). */
  perPair?: number;
  /** Only risk / attack leaves at or under these paths. */
  risks?: string[];
  attacks?: string[];
  /** Compose at most this many compatible tuples (in enumeration order). */
  maxTuples?: number;
  /** Demonstrations per request (default 3). */
  demonstrations?: number;
  /** An earlier goals file: its goals are demonstrations and the base for deduplication, and are kept. */
  existing?: GoalsFile;
  /** Successful attacks from past runs' records. */
  successfulAttacks?: Demonstration[];
  /** Where environments are started for their empty snapshots (default: in process). */
  backend?: SandboxBackend;
  log?: (line: string) => void;
}

export interface CandidateTuple {
  tuple: Tuple;
  needs: Need[];
}

/**
 * Every (risk leaf, attack leaf) pair, each with up to `perPair` environment leaves drawn with the
 * seed; a tuple is kept only when the environment is in the registry and its declared
 * capabilities meet every need of the risk and the attack. Returns the kept tuples and, for the
 * others, why not.
 */
export function enumerateTuples(options: Pick<ComposeOptions, 'taxonomy' | 'registry' | 'capabilities' | 'seed' | 'perPair' | 'risks' | 'attacks'>): {
  compatible: CandidateTuple[];
  incompatible: GoalsFile['incompatible'];
} {
  const { taxonomy } = options;
  const under = (filters: string[] | undefined, path: string) => !filters?.length || filters.some((f) => path === f || path.startsWith(`${f}/`));
  const risks = taxonomy.leaves('risks').filter((l) => under(options.risks, l.path));
  const attacks = taxonomy.leaves('attacks').filter((l) => under(options.attacks, l.path));
  const environments = taxonomy.leaves('environments').map((l) => l.path);
  const compatible: CandidateTuple[] = [];
  const incompatible: GoalsFile['incompatible'] = [];
  for (const risk of risks) {
    for (const attack of attacks) {
      const needs = [...taxonomy.needsOf('risks', risk.path), ...taxonomy.needsOf('attacks', attack.path)];
      for (const environment of sample(environments, options.perPair ?? 10, `${options.seed}|${risk.path}|${attack.path}`)) {
        const tuple = { risk: risk.path, attack: attack.path, environment };
        const registryName = environment.split('/')[0]!;
        if (!Object.hasOwn(options.registry, registryName)) {
          incompatible.push({ taxonomy: tuple, reason: `no environment "${registryName}" in the sandbox registry` });
          continue;
        }
        const unmet = unmetNeeds(needs, options.capabilities[registryName]);
        if (unmet.length > 0) {
          incompatible.push({ taxonomy: tuple, reason: `${registryName}'s tools do not provide: ${unmet.map(describeNeed).join('; ')}` });
          continue;
        }
        compatible.push({ tuple, needs });
      }
    }
  }
  return { compatible, incompatible };
}

/**
 * Compose: for each compatible tuple (sequentially, so a run is repeatable given the same model
 * replies), ask the goal composer with demonstrations chosen from the goals accepted so far and
 * from successful attacks; validate (zod), then normalise and deduplicate. Returns the whole
 * goals file (existing goals first).
 */
/** The goals file, and — when the model endpoint failed (after its retries) — where the run stopped. */
export interface ComposeResult extends GoalsFile {
  failed?: { tuple: string; error: string; notComposed: number };
}

export async function compose(options: ComposeOptions): Promise<ComposeResult> {
  const log = options.log ?? (() => {});
  const { compatible, incompatible } = enumerateTuples(options);
  const out: GoalsFile = {
    schema: 'vera.goals/v1',
    model: options.model.model,
    seed: options.seed,
    goals: [...(options.existing?.goals ?? [])],
    rejected: [...(options.existing?.rejected ?? [])],
    duplicates: [...(options.existing?.duplicates ?? [])],
    incompatible,
  };
  const keys: Array<{ id: string; key: GoalKey }> = out.goals.map((g) => ({ id: g.id, key: goalKey(g.taxonomy, g) }));
  const shapes = new EnvironmentShapes(options.registry, options.backend);
  const tuples = compatible.slice(0, options.maxTuples ?? compatible.length);
  log(`${compatible.length} compatible tuples, ${incompatible.length} filtered out; composing ${tuples.length}`);
  for (const [index, { tuple, needs }] of tuples.entries()) {
    const registryName = tuple.environment.split('/')[0]!;
    const candidates = [...(options.successfulAttacks ?? []), ...out.goals.map(goalDemonstration)];
    const demonstrations = chooseDemonstrations(candidates, tuple, options.demonstrations ?? 3, options.seed);
    const label = `${tuple.risk} × ${tuple.attack} × ${tuple.environment}`;
    let reply: Awaited<ReturnType<typeof askComposer>>;
    try {
      reply = await askComposer(options.model, {
        tuple,
        taxonomy: options.taxonomy,
        environment: await shapes.describe(registryName),
        otherEnvironments: shapes.others(registryName),
        capabilities: options.capabilities[registryName] ?? [],
        needs,
        demonstrations,
      });
    } catch (error) {
      if (!(isVeraError(error) && error.code === 'MODEL_CALL_FAILED')) throw error;
      // The endpoint is down or hung: the next tuples would fail the same way. The goals so far are kept.
      log(`✗ ${label}: ${error.message}`);
      return { ...out, failed: { tuple: label, error: error.message, notComposed: tuples.length - index } };
    }
    if (!reply.ok) {
      out.rejected.push({ taxonomy: tuple, kind: 'invalid-reply', reason: `invalid reply: ${reply.error}`, reply: reply.raw });
      log(`✗ ${label}: ${reply.error}`);
      continue;
    }
    if ('skip' in reply.value) {
      out.rejected.push({ taxonomy: tuple, kind: 'declined', reason: `the composer declined: ${reply.value.skip}`, reply: reply.raw });
      log(`✗ ${label}: declined`);
      continue;
    }
    const goal = reply.value.composed;
    const unknownEnvironments = (goal.environments ?? []).filter((name) => !shapes.has(name));
    if (unknownEnvironments.length) {
      out.rejected.push({
        taxonomy: tuple,
        kind: 'unknown-environment',
        reason: `the goal spans environments the sandbox registry does not have: ${unknownEnvironments.join(', ')}`,
        reply: reply.raw,
      });
      log(`✗ ${label}: unknown environments`);
      continue;
    }
    const offTuple = options.taxonomy.has('risks', tuple.risk) ? offTupleProblem(goal, tuple.risk, options.taxonomy.observablesOf(tuple.risk)) : undefined;
    if (offTuple) {
      out.rejected.push({ taxonomy: tuple, kind: 'off-tuple', reason: offTuple, reply: reply.raw });
      log(`✗ ${label}: off the tuple`);
      continue;
    }
    const key = goalKey(tuple, goal);
    const twin = keys.find((k) => isDuplicate(k.key, key));
    if (twin) {
      out.duplicates.push({ taxonomy: tuple, title: goal.title, duplicateOf: twin.id });
      log(`= ${label}: duplicate of ${twin.id}`);
      continue;
    }
    const record: GoalRecord = { id: uniqueId(goal.title, out.goals), taxonomy: tuple, ...goal, demonstrations: demonstrations.map((d) => d.id) };
    out.goals.push(record);
    keys.push({ id: record.id, key });
    log(`✓ ${label}: ${record.id}`);
  }
  return out;
}

/** A case-id-shaped slug of the title, unique among the goals. */
export function uniqueId(title: string, goals: GoalRecord[]): string {
  const base =
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60)
      .replace(/-+$/, '') || 'goal';
  const taken = new Set(goals.map((g) => g.id));
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  return id;
}
