import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { libraryReport } from '../../pipeline/library/library-report.js';
import { DEFAULT_TAXONOMY_DIR, Taxonomy } from '../../pipeline/taxonomy/taxonomy.js';
import { readTaskSanity, TASK_SANITY_FILE } from '../../pipeline/library/task-sanity-file.js';
import { writeFileAtomic } from '../../pipeline/yaml-file.js';
import {
  composeLibrary,
  DEFAULT_FAMILIES_DIR,
  DEFAULT_LIBRARY_DIR,
  DEFAULT_METHODS_PER_FAMILY,
  loadFamilies,
  writeLibrary,
} from '../../pipeline/library/compose-library.js';
import { parseArgs } from '../parse-args.js';
import type { CliCommand } from '../main.js';
import { readRobustness, ROBUSTNESS_FILE } from '../../pipeline/library/robustness-file.js';

/**
 * `vera library compose`: rebuilds the bundled library (cases/bench) from the scenario families
 * (cases/families) and the attack-method renderers; `--check` only says whether the committed
 * suites are the composition.
 */
export const libraryCommand: CliCommand = {
  name: 'library',
  summary: 'compose the bundled case library from its scenario families (deterministic, no model)',
  usage: [
    `vera library compose [--families ${DEFAULT_FAMILIES_DIR}] [--taxonomy ${DEFAULT_TAXONOMY_DIR}] [--out ${DEFAULT_LIBRARY_DIR}] [--per-family ${DEFAULT_METHODS_PER_FAMILY}] [--check]`,
    `vera library report  [--families ${DEFAULT_FAMILIES_DIR}] [--taxonomy ${DEFAULT_TAXONOMY_DIR}] [--out docs/library.md] [--check]`,
    '  --check   write nothing; exit 1 if the suites (or the page) differ from what the files give',
  ].join('\n'),
  async run(args, io) {
    const { positional, flags } = parseArgs(args, { values: ['families', 'out', 'per-family', 'taxonomy'], booleans: ['check'] });
    if (!['compose', 'report'].includes(positional[0] ?? '') || positional.length > 1) {
      io.err(`vera library: expected "compose" or "report"\nusage: ${this.usage}`);
      return 2;
    }
    if (positional[0] === 'report') return report(flags, io);
    const perFamily = flags['per-family'] === undefined ? DEFAULT_METHODS_PER_FAMILY : Number(flags['per-family']);
    if (!Number.isInteger(perFamily) || perFamily < 1) throw new Error(`--per-family: expected a positive integer, got ${String(flags['per-family'])}`);
    const familiesDir = resolve(io.cwd, (flags.families as string | undefined) ?? DEFAULT_FAMILIES_DIR);
    const outDir = resolve(io.cwd, (flags.out as string | undefined) ?? DEFAULT_LIBRARY_DIR);
    const families = await loadFamilies(familiesDir);
    const taxonomy = await Taxonomy.load(resolve(io.cwd, (flags.taxonomy as string | undefined) ?? DEFAULT_TAXONOMY_DIR));
    const library = composeLibrary(families, { methodsPerFamily: perFamily, taxonomy });
    for (const problem of library.problems) io.err(`vera library: ${problem}`);
    const cases = [...library.suites.values()].reduce((n, s) => n + s.length, 0);
    const write = await writeLibrary(outDir, library, { check: flags.check === true });
    io.out(`${families.length} families → ${cases} cases in ${library.suites.size} suite files`);
    if (flags.check) {
      for (const suite of write.stale) io.err(`vera library: ${suite} differs from the composition (run: vera library compose)`);
      return write.stale.length > 0 || library.problems.length > 0 ? 1 : 0;
    }
    const suitesWritten = write.written.filter((f) => f.endsWith('.case.yaml')).length;
    io.out(`wrote ${write.written.length}, removed ${write.removed.length}, unchanged ${library.suites.size - suitesWritten}`);
    return library.problems.length > 0 ? 1 : 0;
  },
};

/** The hand-written cases: case files directly under cases/<environment>/. */
async function handWrittenCases(casesDir: string): Promise<number> {
  let n = 0;
  for (const dir of await readdir(casesDir, { withFileTypes: true })) {
    if (!dir.isDirectory() || ['bench', 'families', 'taxonomy', 'review'].includes(dir.name)) continue;
    n += (await readdir(join(casesDir, dir.name))).filter((f) => f.endsWith('.case.yaml')).length;
  }
  return n;
}

async function report(flags: Record<string, string | boolean | string[]>, io: Parameters<CliCommand['run']>[1]): Promise<number> {
  const familiesDir = resolve(io.cwd, (flags.families as string | undefined) ?? DEFAULT_FAMILIES_DIR);
  const families = await loadFamilies(familiesDir);
  const taxonomy = await Taxonomy.load(resolve(io.cwd, (flags.taxonomy as string | undefined) ?? DEFAULT_TAXONOMY_DIR));
  const library = composeLibrary(families, { taxonomy });
  const taskSanity = await readTaskSanity(resolve(io.cwd, TASK_SANITY_FILE));
  const robustness = await readRobustness(resolve(io.cwd, ROBUSTNESS_FILE));
  const text = libraryReport({
    taxonomy,
    families,
    library,
    handWritten: await handWrittenCases(resolve(io.cwd, 'cases')),
    ...(taskSanity ? { taskSanity } : {}),
    ...(robustness ? { robustness } : {}),
  });
  const out = resolve(io.cwd, (flags.out as string | undefined) ?? 'docs/library.md');
  if (flags.check) {
    const current = await readFile(out, 'utf8').catch(() => '');
    if (current !== text) {
      io.err(`vera library: ${out} is not current (run: vera library report)`);
      return 1;
    }
    io.out(`${out} is current`);
    return 0;
  }
  await writeFileAtomic(out, text);
  io.out(`wrote ${out}`);
  return 0;
}
