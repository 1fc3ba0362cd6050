import { access } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ThreatModel } from '../../engine/case-schema.js';
import { InProcessBackend } from '../../sandbox/backends/in-process-backend.js';
import type { AnyEnvironmentDefinition } from '../../sandbox/environment.js';
import type { SandboxBackend } from '../../sandbox/sandbox.js';
import type { GoalRecord, Tuple } from '../compose/goals-file.js';
import type { JsonModel } from '../llm/json-model.js';
import { EnvironmentShapes } from '../environment-shapes.js';
import { toYaml, writeFileAtomic } from '../yaml-file.js';
import { isVeraError } from '../../engine/errors.js';
import type { ObservableKind } from '../taxonomy/taxonomy-schema.js';
import { StartedDryRun } from './dry-run.js';
import { acceptCase, assembleCase, caseYaml, type Stage } from './acceptance.js';
import { askCompiler, type CompilerInput } from './case-compiler.js';

export interface CompileOptions {
  goals: GoalRecord[];
  model: JsonModel;
  registry: Record<string, AnyEnvironmentDefinition>;
  /** Kept cases go to `<outDir>/<environment>/<goal id>.case.yaml`. */
  outDir: string;
  /** Further attempts after a rejected one, each told why the last was rejected (default 1). */
  repairs?: number;
  /** Recompile goals whose case file already exists (default: skip them). */
  force?: boolean;
  /** Paths in reports and YAML error messages are relative to this. */
  cwd: string;
  backend?: SandboxBackend;
  log?: (line: string) => void;
  /** Where each risk leaves its harm (`Taxonomy.observablesOf`); without it the observable gate is skipped. */
  observablesOf?: (risk: string) => readonly ObservableKind[] | undefined;
}

export interface KeptCase {
  goal: string;
  file: string;
  attempts: number;
  threatModels: ThreatModel[];
}

export interface RejectedGoal {
  goal: string;
  taxonomy: Tuple;
  stage: Stage;
  reasons: string[];
  attempts: Array<{ attempt: number; stage: Stage; reasons: string[] }>;
  lastReply: string;
}

export interface CompileReport {
  kept: KeptCase[];
  rejected: RejectedGoal[];
  skipped: Array<{ goal: string; reason: string }>;
  /**
   * The model endpoint failed (after its retries) while compiling `goal`: the run stopped there. The
   * report holds what was done before; `notCompiled` lists the goals left, that goal first.
   */
  failed?: { goal: string; error: string; notCompiled: string[] };
}

/**
 * Compile each goal (sequentially: repeatable given the same model replies) into a case, kept
 * only when it passes every acceptance rule (acceptance.ts); a rejected attempt is retried with
 * its reasons, up to `repairs` times, then reported.
 */
export async function compile(options: CompileOptions): Promise<CompileReport> {
  const log = options.log ?? (() => {});
  const backend = options.backend ?? new InProcessBackend({ environments: options.registry });
  const report: CompileReport = { kept: [], rejected: [], skipped: [] };
  const shapes = new EnvironmentShapes(options.registry, backend);
  await using dryRun = await StartedDryRun.start({ backend });

  for (const [index, goal] of options.goals.entries()) {
    const envName = goal.taxonomy.environment.split('/')[0]!;
    const file = join(options.outDir, envName, `${goal.id}.case.yaml`);
    const shown = relative(options.cwd, file);
    if (!options.force && (await exists(file))) {
      report.skipped.push({ goal: goal.id, reason: `${shown} exists (use --force to compile it again)` });
      continue;
    }
    const mounted = [envName, ...(goal.environments ?? []).filter((n) => n !== envName)];
    const missing = mounted.filter((n) => !Object.hasOwn(options.registry, n));
    if (missing.length) {
      report.rejected.push({
        goal: goal.id,
        taxonomy: goal.taxonomy,
        stage: 'init',
        reasons: missing.map((n) => `environment "${n}" is not in the sandbox registry`),
        attempts: [],
        lastReply: '',
      });
      continue;
    }
    const observables = options.observablesOf?.(goal.taxonomy.risk);
    const input: CompilerInput = { goal, environments: [], ...(observables ? { harmSeenIn: observables } : {}) };
    for (const name of mounted) input.environments.push(await shapes.describe(name));

    const attempts: RejectedGoal['attempts'] = [];
    let lastReply = '';
    let kept = false;
    for (let attempt = 1; attempt <= 1 + (options.repairs ?? 1); attempt++) {
      let reply: Awaited<ReturnType<typeof askCompiler>>;
      try {
        reply = await askCompiler(options.model, input);
      } catch (error) {
        if (!(isVeraError(error) && error.code === 'MODEL_CALL_FAILED')) throw error;
        // The endpoint is down or hung: the next goals would fail the same way. What is done stays done.
        report.failed = { goal: goal.id, error: error.message, notCompiled: options.goals.slice(index).map((g) => g.id) };
        log(`✗ ${goal.id}: ${error.message}`);
        return report;
      }
      lastReply = reply.raw;
      let stage: Stage;
      let reasons: string[];
      if (!reply.ok) {
        stage = 'reply';
        reasons = [`invalid reply: ${reply.error}`];
      } else {
        const caseData = assembleCase(goal, reply.value);
        const yaml = caseYaml(caseData, options.model.model);
        const verdict = await acceptCase(yaml, shown, { registry: options.registry, backend, goal, dryRun, ...(observables ? { observables } : {}) });
        if (verdict.ok) {
          await writeFileAtomic(file, yaml);
          report.kept.push({ goal: goal.id, file: shown, attempts: attempt, threatModels: verdict.spec!.threatModels });
          log(`✓ ${goal.id} → ${shown} (attempt ${attempt}; ${verdict.spec!.threatModels.join(', ')})`);
          kept = true;
          break;
        }
        stage = verdict.stage!;
        reasons = verdict.reasons;
      }
      attempts.push({ attempt, stage, reasons });
      log(`✗ ${goal.id} attempt ${attempt} (${stage}): ${reasons[0]}`);
      input.previous = { reply: reply.raw, reasons };
    }
    if (!kept) {
      const last = attempts.at(-1)!;
      report.rejected.push({ goal: goal.id, taxonomy: goal.taxonomy, stage: last.stage, reasons: last.reasons, attempts, lastReply });
    }
  }
  return report;
}

export async function writeCompileReport(file: string, report: CompileReport, model: string): Promise<void> {
  await writeFileAtomic(
    file,
    toYaml({ schema: 'vera.compile-report/v1', model, ...report }, ' vera compile report: kept cases and rejected goals with the stage and reasons.'),
  );
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
