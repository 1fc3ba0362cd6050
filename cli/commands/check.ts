import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { formatProblem, parseCaseSuiteSource } from '../../engine/case-loader.js';
import { CaseValidation } from '../../runner/case-validation.js';
import { loadEnvironments } from '../../plugin/resolve-parts.js';
import { findFiles } from '../find-files.js';
import { CASE_FILE } from '../../plugin/case-sources.js';
import { CASE_MODULE_FILE, importCaseModuleStandalone, loadCaseModule } from '../../plugin/case-module.js';
import { parseArgs } from '../parse-args.js';
import { globFiles, veraProjects } from '../project-config.js';
import type { CliCommand } from '../main.js';
import type { SafetyCase } from '../../engine/case-schema.js';
import { reportRobustness } from './check-robustness.js';

/**
 * `vera check [paths…]`: validates case files (schema, then witnesses: violated on the violating
 * one, safe on the safe one and on doing nothing) without running any agent.
 */
export const checkCommand: CliCommand = {
  name: 'check',
  summary: 'validate case files and their witnesses (no agent runs)',
  usage:
    'vera check [file-or-dir …] [--environments <module>] [--robustness [--record <file.json>]]\n' +
    '  default: the case files the Vera plugin of ./vitest.config.* includes, with its environments\n' +
    '  --robustness: also replay every witness by the other routes its environments declare, and report per case\n' +
    '                the share judged as the original (--record writes the figures as JSON)',
  async run(args, io) {
    const { positional: paths, flags } = parseArgs(args, { values: ['environments', 'record'], booleans: ['robustness'], repeatable: ['environments'] });
    const envModules = (flags.environments as string[] | undefined) ?? [];
    let files: string[];
    let environments: Awaited<ReturnType<typeof loadEnvironments>>;
    if (paths.length > 0) {
      environments = await loadEnvironments(envModules, io.cwd);
      files = await findFiles(paths, CASE_FILE, io.cwd);
    } else {
      const projects = await veraProjects(io.cwd);
      if (projects.length === 0) {
        io.err(`no vitest config with vera() in ${io.cwd}: name the case files or directories to check (vera check cases/)`);
        return 2;
      }
      files = [...new Set((await Promise.all(projects.map((p) => globFiles(p.root, p.include)))).flat())].sort();
      environments = {};
      for (const project of projects) Object.assign(environments, await loadEnvironments(project.environments, project.root));
      Object.assign(environments, await loadEnvironments(envModules, io.cwd));
    }
    if (files.length === 0) {
      io.err('no case files (*.case.yaml, *.case.ts) found');
      return 1;
    }
    const validation = new CaseValidation(async () => environments);
    let failed = 0;
    const passed: Array<{ spec: SafetyCase; file: string }> = [];
    for (const file of files) {
      const name = relative(io.cwd, file);
      const parsed = CASE_MODULE_FILE.test(file)
        ? await loadCaseModule(file, (id) => importCaseModuleStandalone(id, io.cwd), name)
        : parseCaseSuiteSource(await readFile(file, 'utf8'), name);
      if (!parsed.ok) {
        failed++;
        for (const p of parsed.problems) io.err(`✗ ${formatProblem(p)}`);
        continue;
      }
      // The same checks the plugin runs when it loads the file: init steps, then witnesses.
      const problems: string[] = [];
      for (const loaded of parsed.cases) {
        try {
          const found = await validation.problemsOf([loaded]);
          const label = parsed.cases.length > 1 ? ` (${loaded.spec.id})` : '';
          problems.push(...found.map((p) => `${formatProblem(p)}${label}`));
        } catch (error) {
          problems.push(`${name} (${loaded.spec.id}): ${(error as Error).message}`);
        }
      }
      for (const loaded of parsed.cases) {
        if (loaded.spec.waive?.provenance) io.out(`  ⚠ ${name} (${loaded.spec.id}): the provenance check is waived: ${loaded.spec.waive.provenance}`);
      }
      if (problems.length === 0) {
        io.out(`✓ ${name}${parsed.cases.length > 1 ? ` (${parsed.cases.length} cases)` : ''}`);
        for (const loaded of parsed.cases) passed.push({ spec: loaded.spec, file: name });
      } else {
        failed++;
        for (const p of problems) io.err(`✗ ${p}`);
      }
    }
    io.out(`${files.length - failed} of ${files.length} case files ok`);
    // Robustness is asked of cases whose witnesses hold: a broken case has no verdict to keep.
    if (flags.robustness) {
      const reports = await reportRobustness(passed, { environments, out: (line) => io.out(line), record: flags.record as string | undefined });
      // A route named in robustness.notTheSameAct that no environment declares is a mistake of the case.
      if (reports.some((r) => r.notTheSameAct.some((x) => !x.declared))) return 1;
    } else if (flags.record) {
      io.err('--record writes the robustness figures: it needs --robustness');
      return 2;
    }
    return failed ? 1 : 0;
  },
};
