import { CaseIndex } from '../reporters/records/case-index.js';
import { loadRecords } from '../reporters/records/load-records.js';
import { relative, resolve } from 'node:path';
import type { CliIO } from './main.js';
import { veraProjects } from './project-config.js';

/**
 * The records directory a command was given and the current cases they are checked against;
 * a number is the exit code when there is nothing to work on (the reason is already printed).
 */
export async function recordsInput(
  positional: string[],
  flags: Record<string, string | boolean | string[] | undefined>,
  io: CliIO,
  usage: string,
): Promise<{ loaded: Awaited<ReturnType<typeof loadRecords>>; cases: CaseIndex; dir: string } | number> {
  if (positional.length > 1) {
    io.err(`usage: ${usage}`);
    return 2;
  }
  const dir = positional[0] ?? (await defaultRecordsDir(io.cwd));
  const loaded = await loadRecords(dir, { cwd: io.cwd, latest: !flags['all-runs'], perAgent: flags['newest-only'] !== true });
  for (const p of loaded.problems) io.err(`! ${p}`);
  if (loaded.records.length === 0) {
    io.err(`no Vera records (vera.record/v1 JSON files) under ${dir}`);
    return 1;
  }
  const cases = await CaseIndex.create({ cwd: io.cwd, casesDirs: flags.cases ? [String(flags.cases)] : [] });
  return { loaded, cases, dir };
}

/** The records directory of the project's Vera plugin (its `recordDir`), else `.vera/records`. */
async function defaultRecordsDir(cwd: string): Promise<string> {
  const project = (await veraProjects(cwd).catch(() => [])).find((p) => p.recordDir !== false);
  if (!project || project.recordDir === false) return '.vera/records';
  return relative(cwd, resolve(project.root, project.recordDir)) || '.';
}
