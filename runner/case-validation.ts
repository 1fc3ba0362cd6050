import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { InitScriptError } from '../sandbox/sandbox.js';
import type { AnyEnvironmentDefinition } from '../sandbox/environment.js';
import { environmentsOf } from '../engine/case-helpers.js';
import { formatField, type CaseProblem, type LoadedCase } from '../engine/case-loader.js';
import { initArgumentProblems, referenceProblems } from './case-references.js';
import { planProvenance } from './plan-provenance.js';
import { taxonomyIdProblem } from './taxonomy-ids.js';
import { verifierPathProblems } from './verifier-paths.js';
import { caseHash } from '../engine/record-writer.js';
import { checkWitnesses } from './witness.js';

/** Results of checks that use only the built-in environments (see the constructor). */
const builtinOnlyResults = new Map<string, Promise<CaseProblem[]>>();

/**
 * At most this many cases are checked at once in a process. The checks are CPU work in this
 * thread (sandboxes replaying init scripts and witnesses), so more at once is not faster — but
 * every one in flight holds its sandboxes: a library file's 200 cases at once held GBs.
 */
const checkSlots = (() => {
  const limit = 4;
  let running = 0;
  const waiting: Array<() => void> = [];
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      // A finished check hands its slot to the next waiting one (so the count never overshoots).
      if (running >= limit) await new Promise<void>((go) => waiting.push(go));
      else running++;
      try {
        return await task();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
})();

/**
 * What a case must pass before any of its verdicts counts, checked when its file loads (the
 * plugin's transform and run planner, `vera check`): every init step names a mounted environment,
 * an operation it has and arguments that operation accepts and knows — located at the step's own
 * line; every tool the case names exists, with arguments it takes (`case-references.ts`); the
 * witnesses hold (violating → violated, safe → safe, doing nothing → safe, the utility rules);
 * the plan is one a real agent could follow (`plan-provenance.ts`); and the verifier's paths name
 * something (`verifier-paths.ts`). A case that fails is a file error; a verifier that already holds on the initial state
 * never reaches the ASR. Results are cached by case hash: an unchanged case is checked once.
 */
export class CaseValidation {
  private readonly cache: Map<string, Promise<CaseProblem[]>>;

  /**
   * `shared`: the checks use only the built-in environments, so their results hold for any
   * validation in this process — `npm run demo`'s second policy, a second Vitest of one script —
   * and live in one process-wide cache instead of this instance's.
   */
  constructor(
    private readonly environments: () => Promise<Record<string, AnyEnvironmentDefinition>> = async () => ({}),
    options: { shared?: boolean } = {},
  ) {
    this.cache = options.shared ? builtinOnlyResults : new Map();
  }

  /** Every problem of the file's cases (empty when all pass). */
  async problemsOf(cases: readonly LoadedCase[]): Promise<CaseProblem[]> {
    return (await Promise.all(cases.map((c) => this.problemsOfCase(c)))).flat();
  }

  private problemsOfCase(loaded: LoadedCase): Promise<CaseProblem[]> {
    const key = `${loaded.file}\u0000${caseHash(loaded.spec)}`;
    let result = this.cache.get(key);
    if (!result) {
      result = checkSlots.run(() => this.check(loaded));
      this.cache.set(key, result);
      if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!);
    }
    return result;
  }

  /**
   * A case that cannot even be checked — an init step that fails when replayed (a repository name
   * one character off), a tool that throws — is a problem of that case, at the step's line: it
   * fails its own file, never the whole run.
   */
  private async check(loaded: LoadedCase): Promise<CaseProblem[]> {
    try {
      return await this.checkCase(loaded);
    } catch (error) {
      const at = (path: PropertyKey[]) => loaded.locate(path);
      if (error instanceof InitScriptError) {
        const { line, column } = at(['init', error.step]);
        return [{ file: loaded.file, line, column, field: `init[${error.step}]`, message: `the init script does not replay: ${error.message}` }];
      }
      const { line, column } = at(['id']);
      return [{ file: loaded.file, line, column, field: 'id', message: `the case could not be checked: ${(error as Error)?.message ?? String(error)}` }];
    }
  }

  private async checkCase(loaded: LoadedCase): Promise<CaseProblem[]> {
    const environments = await this.environments();
    const { BUILTIN_ENVIRONMENT_NAMES, loadBuiltinEnvironment } = await import('../sandbox/environments/builtin-loaders.js');
    const problem = (path: PropertyKey[], field: string, message: string): CaseProblem => {
      const { line, column } = loaded.locate(path);
      return { file: loaded.file, line, column, field, message };
    };
    const { spec } = loaded;
    const mounted = environmentsOf(spec);
    const definitions = new Map<string, AnyEnvironmentDefinition>();
    const problems: CaseProblem[] = [];
    const found = await Promise.all(mounted.map((name) => environments[name] ?? loadBuiltinEnvironment(name)));
    mounted.forEach((name, i) => {
      const def = found[i];
      if (def) definitions.set(name, def);
      else {
        const known = [...new Set([...BUILTIN_ENVIRONMENT_NAMES, ...Object.keys(environments)])].sort().join(', ');
        const path = spec.environments ? ['environments', i] : ['taxonomy', 'environment'];
        problems.push(problem(path, spec.environments ? `environments[${i}]` : 'taxonomy.environment', `unknown environment "${name}" (known: ${known})`));
      }
    });
    spec.init.forEach((step, i) => {
      const [envName = '', opName = ''] = step.op.split('.');
      const def = definitions.get(envName);
      if (!def) {
        if (!mounted.includes(envName))
          problems.push(
            problem(['init', i, 'op'], `init[${i}].op`, `environment "${envName}" is not mounted in this case (mounted: ${mounted.join(', ') || 'none'})`),
          );
        return;
      }
      const op = def.operations.find((o) => o.name === opName);
      if (!op) {
        problems.push(
          problem(['init', i, 'op'], `init[${i}].op`, `${envName} has no operation "${opName}" (it has: ${def.operations.map((o) => o.name).join(', ')})`),
        );
        return;
      }
      const parsed = op.input.safeParse(step.args);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const path = ['init', i, 'args', ...issue.path];
          problems.push(problem(path, `init[${i}].args${issue.path.length ? `.${issue.path.join('.')}` : ''}`, `${step.op}: ${issue.message}`));
        }
      } else {
        for (const p of initArgumentProblems(step, i, parsed.data)) problems.push(problem(p.path, formatField(p.path), p.message));
      }
    });
    if (problems.length === 0) for (const p of referenceProblems(spec, definitions)) problems.push(problem(p.path, formatField(p.path), p.message));
    for (const [kind, field] of [
      ['risks', 'risk'],
      ['attacks', 'attack'],
    ] as const) {
      const why = taxonomyIdProblem(kind, spec.taxonomy[field]);
      if (why) problems.push(problem(['taxonomy', field], `taxonomy.${field}`, why));
    }
    // Witnesses replay the init script: with a broken one they would only repeat its error.
    if (problems.length > 0) return problems;
    const backend = new InProcessBackend({ environments });
    const [check, provenance] = await Promise.all([checkWitnesses(spec, { backend }), planProvenance(spec, { backend })]);
    if (!spec.waive?.provenance) for (const p of provenance) problems.push(problem(p.path, formatField(p.path), p.message));
    const snapshots = check.results.flatMap((r) => (r.kind === 'do-nothing' ? [r.snapshots.initial] : [r.snapshots.final]));
    for (const [predicate, at] of [[spec.verifier, 'verifier'], ...(spec.utility ? [[spec.utility, 'utility'] as const] : [])] as const) {
      for (const p of verifierPathProblems(predicate, [at], snapshots)) problems.push(problem(p.path, formatField(p.path), p.message));
    }
    for (const text of check.problems) {
      // A verifier that holds on the idle agent, or cannot be judged, is the verifier's fault.
      if (/does nothing|cannot be judged/.test(text) && !/utility/.test(text)) {
        problems.push(problem(['verifier'], 'verifier', text));
        continue;
      }
      const nearMiss = /\bnear-miss witness (\d+)\b/.exec(text)?.[1];
      if (nearMiss !== undefined) {
        problems.push(problem(['witnesses', 'nearMiss', Number(nearMiss)], `witnesses.nearMiss[${nearMiss}]`, text));
        continue;
      }
      const kind = /\bthe (violating|safe) witness\b/.exec(text)?.[1];
      problems.push(problem(kind ? ['witnesses', kind] : ['witnesses'], kind ? `witnesses.${kind}` : 'witnesses', text));
    }
    return problems;
  }
}
