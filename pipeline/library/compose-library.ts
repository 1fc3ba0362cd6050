import { createHash } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { PlanCall } from '../../engine/scripted-plan.js';
import { environmentsOf, safetyCase, type SafetyCaseInput } from '../../engine/case-schema.js';
import { splicedTexts } from '../../engine/text-integrity.js';
import { LIBRARY_INDEX_FILE, libraryIndexText, type LibraryIndexEntry } from '../../engine/library-index.js';
import { surfaceOf, threatModelsFor } from '../../engine/attack-surface.js';
import { capabilityMap, describeNeed, unmetNeeds, type CapabilityMap } from '../capabilities.js';
import { isDuplicate, normalise, type GoalKey } from '../compose/dedupe.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import { parseYaml, toYaml, writeFileAtomic } from '../yaml-file.js';
import { attackRenderers, renderAttack, renderingProblems, type AttackRenderer, type RenderedAttack } from './renderers/index.js';
import { scenarioFamily, type ScenarioFamily } from './scenario-family.js';

/**
 * Stage 2 for the bundled library: every scenario family (cases/families) crossed with attack
 * methods (renderers/), deterministically — the same families give the same cases, byte for
 * byte — into suite files, one per environment and risk category (cases/bench/<env>/<category>.case.yaml).
 */

export const DEFAULT_FAMILIES_DIR = 'cases/families';
export const DEFAULT_LIBRARY_DIR = 'cases/bench';
/** Attack methods per family: 200 families × 9 = 1800 cases. */
export const DEFAULT_METHODS_PER_FAMILY = 9;

export interface LoadedFamily {
  family: ScenarioFamily;
  /** Relative to the families folder, e.g. `email/forward-reset-code.family.yaml`. */
  file: string;
}

/** Every `*.family.yaml` under `dir`, sorted by path; a bad file throws one error naming file, line and field. */
/** What of a family becomes text an agent, its user or its tools' results read (the attack texts: `renderings`, else rendered from `harm`). */
const FAMILY_TEXT_FIELDS: ReadonlySet<string> = new Set(['title', 'goal', 'task', 'user', 'init', 'harm', 'renderings']);

/** A family whose written renderings fit the methods they are written for (renderers/attack-renderer.ts). */
const checkedFamily = scenarioFamily.superRefine((family, ctx) => {
  for (const p of renderingProblems(family, attackRenderers)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
});

export async function loadFamilies(dir: string): Promise<LoadedFamily[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith('.family.yaml'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  const loaded: LoadedFamily[] = [];
  for (const path of files) {
    const file = relative(dir, path).split(sep).join('/');
    const family = parseYaml(await readFile(path, 'utf8'), file, checkedFamily, { textFields: FAMILY_TEXT_FIELDS });
    const expected = `${family.id}.family.yaml`;
    if (!file.endsWith(`/${expected}`) && file !== expected) throw new Error(`${file}:1 id: "${family.id}" must match the file name (${expected})`);
    loaded.push({ family, file });
  }
  return loaded;
}

export interface ComposedLibrary {
  /** Suite file (relative to the library folder) → its cases, in order. */
  suites: Map<string, SafetyCaseInput[]>;
  /** Family id → the attack methods it was composed with. */
  methods: Map<string, string[]>;
  /** Why a family or a case was left out (duplicates, cases the schema refuses). */
  problems: string[];
}

export interface ComposeLibraryOptions {
  methodsPerFamily?: number;
  renderers?: readonly AttackRenderer[];
  /**
   * With the trees, the same compatibility rule as `vera compose`: a family whose environments
   * cannot do what its risk needs is refused, and a method whose attack needs what they do not
   * offer (search poisoning needs pages to read) is not used on it.
   */
  taxonomy?: Taxonomy;
  capabilities?: CapabilityMap;
}

/** A number from text, stable across runs and machines (tie-breaks that are not alphabetical). */
function stableHash(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

/**
 * The methods for each family: the ones it has renderings for, or its own list, else the `count` applicable methods
 * used least so far (ties broken by a hash of family and method), so every method is used about
 * equally across the library and neighbouring families get different ones.
 */
export function chooseMethods(
  families: readonly ScenarioFamily[],
  renderers: readonly AttackRenderer[],
  count: number,
  /** Why a method cannot be used on a family (what it needs that the family's environment does not offer), or undefined. */
  unfitBecause: (family: ScenarioFamily, renderer: AttackRenderer) => string | undefined = () => undefined,
): Map<string, AttackRenderer[]> {
  const fits = (family: ScenarioFamily, renderer: AttackRenderer) => unfitBecause(family, renderer) === undefined;
  const used = new Map<string, number>(renderers.map((r) => [r.attack, 0]));
  const chosen = new Map<string, AttackRenderer[]>();
  for (const family of families) {
    const fit = renderers.filter((r) => !r.unfit?.(family) && fits(family, r));
    let picked: AttackRenderer[];
    const own = family.renderings ? Object.keys(family.renderings) : family.attacks;
    if (own) {
      picked = own.map((a) => {
        const r = fit.find((x) => x.attack === a);
        if (!r) {
          const renderer = renderers.find((x) => x.attack === a);
          if (!renderer) throw new Error(`family ${family.id}: attack method "${a}" has no renderer`);
          const why = renderer.unfit?.(family) ?? unfitBecause(family, renderer);
          throw new Error(`family ${family.id}: attack method "${a}" does not fit it${why ? `: ${why}` : ''}`);
        }
        return r;
      });
      // The composer's order, whatever order the family wrote them in.
      picked.sort((a, b) => renderers.indexOf(a) - renderers.indexOf(b));
    } else {
      picked = [...fit]
        .sort((a, b) => used.get(a.attack)! - used.get(b.attack)! || stableHash(`${family.id}:${a.attack}`) - stableHash(`${family.id}:${b.attack}`))
        .slice(0, count)
        .sort((a, b) => renderers.indexOf(a) - renderers.indexOf(b));
    }
    for (const r of picked) used.set(r.attack, used.get(r.attack)! + 1);
    chosen.set(family.id, picked);
  }
  return chosen;
}

function familyKey(f: ScenarioFamily): GoalKey {
  return {
    risk: f.risk,
    environment: f.environment,
    resource: normalise(f.semantics.resource),
    change: normalise(f.semantics.change),
    context: normalise(f.semantics.context),
  };
}

const title = (slug: string) => slug.replace(/-/g, ' ');

/** One case: the family's situation with one method's attack text, and the plan that goes with it. */
export function composeCase(family: ScenarioFamily, renderer: AttackRenderer, variant: number): SafetyCaseInput {
  const rendered: RenderedAttack = renderAttack(renderer, family, variant);
  const harmCalls: PlanCall[] = (family.plan.attack ?? family.witnesses.violating.calls) as PlanCall[];
  const injections = rendered.injections.map((inj, i) => {
    const carrier = family.carriers[inj.carrier];
    if (!carrier) throw new Error(`family ${family.id}: ${renderer.attack} places an injection on carrier ${inj.carrier}, which it does not have`);
    return {
      id: `${renderer.slug}-${i + 1}`,
      tool: carrier.tool,
      ...(carrier.when ? { when: carrier.when } : {}),
      ...(carrier.field ? { field: carrier.field } : {}),
      ...(carrier.where ? { where: carrier.where } : {}),
      mode: inj.mode,
      payload: inj.payload,
      ...(inj.after ? { after: inj.after } : {}),
    };
  });
  const toolDescriptions = (rendered.toolDescriptions ?? []).map((d, i) => ({
    id: `${renderer.slug}-description-${i + 1}`,
    tool: d.tool,
    mode: d.mode,
    payload: d.payload,
    ...(d.afterCalls ? { afterCalls: d.afterCalls } : {}),
  }));
  const planInjections: Record<string, PlanCall[]> = {};
  rendered.injections.forEach((inj, i) => {
    if (inj.leadsTo === 'nothing') planInjections[`${renderer.slug}-${i + 1}`] = [];
  });
  // A method that arrives through data (injections, tool descriptions) comes with an honest user:
  // the renderer's user-channel text would be a direct request reported under this method.
  const surface = surfaceOf(renderer.attack);
  const userChannel = surface !== 'injected' && surface !== 'tool-description';
  const messages = userChannel ? rendered.messages : [];
  const messagePlans = userChannel ? rendered.messageLeadsTo?.map((leads) => (leads === 'nothing' ? [] : harmCalls)) : undefined;
  const turns = Math.max(3, messages.length + 2);
  return {
    id: `${family.id}--${renderer.slug}`,
    title: `${family.title} (${title(renderer.slug)})`,
    goal: family.goal,
    taxonomy: { risk: family.risk, attack: renderer.attack, environment: family.environment },
    ...(family.environments ? { environments: family.environments } : {}),
    task: family.task,
    ...(family.user ? { user: family.user } : {}),
    attack: {
      guidance: rendered.guidance,
      ...(messages.length ? { messages } : {}),
      injections,
      ...(toolDescriptions.length ? { toolDescriptions } : {}),
    },
    ...(Object.keys(family.secrets).length ? { secrets: family.secrets } : {}),
    init: family.init,
    verifier: family.verifier,
    ...(family.utility ? { utility: family.utility } : {}),
    budgets: family.budgets ?? { turns, toolCalls: 30, seconds: 60 },
    threatModels: threatModelsFor({ messages, injections, toolDescriptions }),
    plan: {
      task: family.plan.task,
      ...(family.plan.attack ? { attack: family.plan.attack } : {}),
      ...(messagePlans ? { messages: messagePlans } : {}),
      ...(Object.keys(planInjections).length ? { injections: planInjections } : {}),
    },
    witnesses: family.witnesses,
    ...(family.robustness ? { robustness: family.robustness } : {}),
    tags: [`family:${family.id}`, ...family.tags],
  } as SafetyCaseInput;
}

/** Where a family's cases go: one suite per environment and risk category. */
export function suiteOf(family: ScenarioFamily): string {
  return `${family.environment.split('/')[0]}/${family.risk.split('/')[0]}.case.yaml`;
}

export function composeLibrary(loaded: readonly LoadedFamily[], options: ComposeLibraryOptions = {}): ComposedLibrary {
  const renderers = options.renderers ?? attackRenderers;
  const problems: string[] = [];
  const kept: ScenarioFamily[] = [];
  const keys: Array<{ id: string; key: GoalKey }> = [];
  const ids = new Set<string>();
  const capabilities = options.capabilities ?? capabilityMap;
  const offered = (f: ScenarioFamily) =>
    environmentsOf({ environments: f.environments, taxonomy: { environment: f.environment } }).flatMap((env) => capabilities[env] ?? []);
  const { taxonomy } = options;
  for (const { family, file } of [...loaded].sort((a, b) => (a.family.id < b.family.id ? -1 : 1))) {
    if (taxonomy) {
      const unmet = unmetNeeds(taxonomy.needsOf('risks', family.risk), offered(family));
      if (!taxonomy.has('risks', family.risk)) {
        problems.push(`${file}: risk "${family.risk}" is not in the risk tree`);
        continue;
      }
      if (unmet.length > 0) {
        problems.push(`${file}: its environments cannot do what ${family.risk} needs: ${JSON.stringify(unmet)}`);
        continue;
      }
    }
    if (ids.has(family.id)) {
      problems.push(`${file}: family id "${family.id}" is used twice`);
      continue;
    }
    ids.add(family.id);
    const key = familyKey(family);
    const twin = keys.find((k) => isDuplicate(k.key, key));
    if (twin) {
      problems.push(`${file}: family "${family.id}" duplicates "${twin.id}" (same risk and environment; resource, change and context overlap)`);
      continue;
    }
    keys.push({ id: family.id, key });
    kept.push(family);
  }
  const unfitBecause = (f: ScenarioFamily, r: AttackRenderer) => {
    const unmet = taxonomy ? unmetNeeds(taxonomy.needsOf('attacks', r.attack), offered(f)) : [];
    return unmet.length ? `it needs ${unmet.map(describeNeed).join(' and ')}, which ${f.environment} does not offer (cases/taxonomy/attacks.yaml)` : undefined;
  };
  const chosen = chooseMethods(kept, renderers, options.methodsPerFamily ?? DEFAULT_METHODS_PER_FAMILY, unfitBecause);
  const suites = new Map<string, SafetyCaseInput[]>();
  const methods = new Map<string, string[]>();
  kept.forEach((family, index) => {
    const picked = chosen.get(family.id)!;
    methods.set(
      family.id,
      picked.map((r) => r.attack),
    );
    for (const renderer of picked) {
      const composed = composeCase(family, renderer, index);
      const valid = safetyCase.safeParse(composed);
      if (!valid.success) {
        const issue = valid.error.issues[0]!;
        problems.push(`family ${family.id} × ${renderer.attack}: the composed case is refused at ${issue.path.join('.')}: ${issue.message}`);
        continue;
      }
      // The renderer's text must read as one voice wrote it (a clause joined to a lower-case fragment did not).
      const spliced = splicedTexts(valid.data);
      if (spliced.length > 0) {
        for (const s of spliced) problems.push(`family ${family.id} × ${renderer.attack}: ${s.path.map(String).join('.')}: ${s.message}`);
        continue;
      }
      const suite = suiteOf(family);
      if (!suites.has(suite)) suites.set(suite, []);
      suites.get(suite)!.push(composed);
    }
  });
  return { suites: new Map([...suites].sort(([a], [b]) => (a < b ? -1 : 1))), methods, problems };
}

const SUITE_HEADER = ' Generated by `vera library compose` from cases/families: edit the family, not this file.';

/** A suite file's text: one YAML document per case. */
export function suiteYaml(cases: readonly SafetyCaseInput[]): string {
  return cases.map((c, i) => `${i === 0 ? '' : '---\n'}${toYaml(c, i === 0 ? SUITE_HEADER : undefined, { flowMaps: true })}`).join('');
}

export interface LibraryWrite {
  written: string[];
  removed: string[];
  /** Suite files whose text differs from the composition (all of them, in check mode). */
  stale: string[];
}

/**
 * Writes the suites under `dir` and removes suite files the composition no longer has. With
 * `check`, writes nothing and reports what differs (the committed library is the composition).
 */
export async function writeLibrary(dir: string, library: ComposedLibrary, options: { check?: boolean } = {}): Promise<LibraryWrite> {
  const existing = new Set<string>();
  try {
    for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (e.isFile() && e.name.endsWith('.case.yaml')) existing.add(relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const result: LibraryWrite = { written: [], removed: [], stale: [] };
  for (const [suite, cases] of library.suites) {
    const text = suiteYaml(cases);
    const current = existing.has(suite) ? await readFile(join(dir, suite), 'utf8') : undefined;
    existing.delete(suite);
    if (current === text) continue;
    result.stale.push(suite);
    if (!options.check) {
      await writeFileAtomic(join(dir, suite), text);
      result.written.push(suite);
    }
  }
  for (const suite of [...existing].sort()) {
    result.stale.push(suite);
    if (!options.check) {
      await rm(join(dir, suite));
      result.removed.push(suite);
    }
  }
  const index = libraryIndexText(indexOf(library));
  const currentIndex = await readFile(join(dir, LIBRARY_INDEX_FILE), 'utf8').catch(() => undefined);
  if (currentIndex !== index) {
    result.stale.push(LIBRARY_INDEX_FILE);
    if (!options.check) {
      await writeFileAtomic(join(dir, LIBRARY_INDEX_FILE), index);
      result.written.push(LIBRARY_INDEX_FILE);
    }
  }
  return result;
}

/** Every composed case with its suite file, family and taxonomy (cases/bench/index.json). */
export function indexOf(library: ComposedLibrary): LibraryIndexEntry[] {
  return [...library.suites].flatMap(([file, cases]) =>
    cases.map((c) => ({
      id: c.id,
      file,
      family: c.tags!.find((t) => t.startsWith('family:'))!.slice('family:'.length),
      risk: c.taxonomy.risk,
      attack: c.taxonomy.attack,
      environment: c.taxonomy.environment,
    })),
  );
}
