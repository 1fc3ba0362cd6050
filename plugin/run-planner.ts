import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { createTagsFilter } from '@vitest/runner/utils';
import type { Reporter, TestProject, TestSpecification, Vitest } from 'vitest/node';
import type { CaseValidation } from '../runner/case-validation.js';
import { CASE_MODULE_FILE } from './case-module.js';
import { CASE_FILE, type CaseSources } from './case-sources.js';
import type { SafetyCase } from '../engine/case-schema.js';
import type { VeraRuntimeConfig } from './options.js';
import { PLAN_KEY, type RunPlan } from './run-plan.js';
import { planCase, type TestPlan } from './test-plan.js';

export { PLAN_KEY, type RunPlan } from './run-plan.js';

/**
 * Plans the case runs of a test run in the main process, before the pool starts: Vitest runs a
 * worker's files one after another (collect, run, next file), so a worker cannot see the tests
 * of files it has not collected yet. The plan applies the same filters Vitest will (`-t`, tags),
 * and is provided to the worker only when one worker runs all the project's case files — then its
 * scheduler can keep `concurrency` runs in flight across files. Files run with line or id filters
 * (an editor's "run this test") are left out; their runs start when their tests do.
 */
export class RunPlanner implements Reporter {
  private vitest: Vitest | undefined;
  private generation = 0;
  private readonly parsed = new Map<string, { mtimeMs: number; cases: Array<{ spec: SafetyCase; file: string }> }>();

  private readonly validation: CaseValidation | undefined;
  private readonly only: ReadonlySet<string> | undefined;
  private readonly sources: CaseSources;
  private readonly projectInNames: () => string | undefined;

  constructor(
    private readonly project: TestProject,
    private readonly config: () => VeraRuntimeConfig | undefined,
    options: {
      /** The plugin's loads (a YAML file parsed once per content, a case module evaluated once). */
      sources: CaseSources;
      /** The plugin's init and witness checks: a file that fails them plans nothing. */
      validation?: CaseValidation;
      /** The library project's selection: only these cases of its files have tests. */
      only?: ReadonlySet<string>;
      /** The project's name in test names, when the run compares agents (decided once every project is configured). */
      project?: () => string | undefined;
    },
  ) {
    this.validation = options.validation;
    this.only = options.only;
    this.sources = options.sources;
    this.projectInNames = options.project ?? (() => undefined);
  }

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  async onTestRunStart(specifications: ReadonlyArray<TestSpecification>): Promise<void> {
    const config = this.config();
    const plan: RunPlan = { generation: ++this.generation, files: [] };
    if (config && this.vitest && this.oneWorker()) {
      const mine = specifications.filter((s) => s.project === this.project && CASE_FILE.test(s.moduleId));
      for (const spec of mine) {
        if (spec.testLines?.length || spec.testIds?.length) continue;
        const cases = await this.casesOf(spec.moduleId);
        const keep = this.filter(spec);
        const planned = cases
          .filter(({ spec: c }) => !this.only || this.only.has(c.id))
          .map(({ spec: c, file }) => ({
            spec: c,
            tests: planCase({ spec: c, file, project: this.projectInNames() }, config)
              .filter(keep)
              .map(({ options: _o, ...t }) => t),
          }));
        plan.files.push({ file: spec.moduleId, cases: planned.filter((c) => c.tests.length > 0) });
      }
    }
    this.project.provide(PLAN_KEY as never, plan as never);
  }

  /** Whether the project's case files all go to one non-isolated worker (Vitest's batching rule). */
  private oneWorker(): boolean {
    const config = this.project.config;
    if (config.isolate !== false) return false;
    const cpus = availableParallelism();
    const max = config.maxWorkers || this.vitest!.config.maxWorkers || (this.vitest!.config.watch ? Math.max(Math.floor(cpus / 2), 1) : Math.max(cpus - 1, 1));
    return max === 1;
  }

  private filter(spec: TestSpecification): (t: TestPlan) => boolean {
    const vitestConfig = this.vitest!.config;
    const pattern = spec.testNamePattern ?? vitestConfig.testNamePattern;
    const tagsExpr = spec.testTagsFilter ?? vitestConfig.tagsFilter;
    const tags = tagsExpr?.length ? createTagsFilter(tagsExpr, this.project.config.tags) : undefined;
    return (t) => (!pattern || pattern.test(t.name)) && (!tags || tags(t.options.tags));
  }

  private async casesOf(file: string): Promise<Array<{ spec: SafetyCase; file: string }>> {
    const { mtimeMs } = await stat(file);
    const cached = this.parsed.get(file);
    // A case module's cases change with the modules it imports: the sources keep its load until then.
    if (cached && cached.mtimeMs === mtimeMs && !CASE_MODULE_FILE.test(file)) return cached.cases;
    const result = await this.sources.load(file);
    // A broken file plans nothing: its module fails with the problem when Vitest imports it.
    const invalid = result.ok && this.validation ? (await this.validation.problemsOf(result.cases)).length > 0 : false;
    const cases = result.ok && !invalid ? result.cases.map((c) => ({ spec: c.spec, file })) : [];
    this.parsed.set(file, { mtimeMs, cases });
    return cases;
  }
}
