import { readdir, readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { formatProblem, parseCaseSuiteSource } from '../../engine/case-loader.js';
import type { SafetyCase } from '../../engine/case-schema.js';
import { caseHash, type SafetyRecord } from '../../engine/record-writer.js';

/** The current version of a case, as found for a record. */
export type CaseLookup = { ok: true; file: string; spec: SafetyCase; hash: string } | { ok: false; problem: string };

/** Every case of one file (a file may hold several YAML documents). */
type FileLookup = { ok: true; file: string; specs: SafetyCase[] } | { ok: false; problem: string };

/**
 * Finds the current case for a record: in the `--cases` directories by id when given, else at
 * the record's `caseFile`. Parses each file once.
 */
export class CaseIndex {
  private readonly byFile = new Map<string, Promise<FileLookup>>();
  private byId: Map<string, string> | undefined;

  private constructor(private readonly cwd: string) {}

  static async create(options: { casesDirs?: string[]; cwd: string }): Promise<CaseIndex> {
    const index = new CaseIndex(options.cwd);
    if (options.casesDirs?.length) {
      index.byId = new Map();
      const files = await caseFilesIn(options.casesDirs, options.cwd);
      for (const file of files) {
        const lookup = await index.load(file);
        if (lookup.ok) for (const spec of lookup.specs) index.byId.set(spec.id, file);
      }
    }
    return index;
  }

  private load(file: string): Promise<FileLookup> {
    let pending = this.byFile.get(file);
    if (!pending) {
      pending = readFile(file, 'utf8').then(
        (source): FileLookup => {
          const parsed = parseCaseSuiteSource(source, file);
          if (!parsed.ok) return { ok: false, problem: `the case file no longer parses: ${parsed.problems.map(formatProblem).join('; ')}` };
          return { ok: true, file, specs: parsed.cases.map((c) => c.spec) };
        },
        (error: Error): FileLookup => ({ ok: false, problem: `cannot read the case file ${file}: ${error.message}` }),
      );
      this.byFile.set(file, pending);
    }
    return pending;
  }

  private async find(file: string, caseId: string): Promise<CaseLookup> {
    const lookup = await this.load(file);
    if (!lookup.ok) return lookup;
    const spec = lookup.specs.find((s) => s.id === caseId);
    if (!spec) return { ok: false, problem: `${file} now holds ${lookup.specs.map((s) => `case ${s.id}`).join(', ')}, not ${caseId}` };
    return { ok: true, file, spec, hash: caseHash(spec) };
  }

  async forRecord(record: Pick<SafetyRecord, 'caseId' | 'caseFile'>): Promise<CaseLookup> {
    if (this.byId) {
      const file = this.byId.get(record.caseId);
      if (!file) return { ok: false, problem: `no case with id ${record.caseId} in the --cases directories` };
      return this.find(file, record.caseId);
    }
    if (!record.caseFile) return { ok: false, problem: 'the record names no case file; pass --cases <dir>' };
    const file = isAbsolute(record.caseFile) ? record.caseFile : resolve(this.cwd, record.caseFile);
    return this.find(file, record.caseId);
  }
}

async function caseFilesIn(paths: string[], cwd: string): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    const info = await stat(abs).catch(() => undefined);
    if (!info) throw new Error(`--cases: no such file or directory: ${p}`);
    if (info.isFile()) out.push(abs);
    else {
      for (const entry of await readdir(abs, { recursive: true, withFileTypes: true })) {
        if (entry.isFile() && /\.case\.ya?ml$/.test(entry.name) && !entry.parentPath.includes('node_modules')) out.push(join(entry.parentPath, entry.name));
      }
    }
  }
  return out.sort();
}
