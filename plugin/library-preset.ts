import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { LIBRARY_INDEX_FILE, libraryIndex, type LibraryIndexEntry } from '../engine/library-index.js';
import { packageRoot } from '../sandbox/container/image.js';
import type { LibraryPreset } from './options.js';
import { parseCaseFileCached } from './parse-cache.js';

/** What the `library` option selects: the case files to collect and, within them, the cases to run. */
export interface LibrarySelection {
  /** The folder the files are under (the package's `cases`): the library project's `dir`. */
  dir: string;
  /** Case files, relative to `dir`. */
  files: string[];
  /** Ids of the cases to run; the other cases of those files are left out. */
  cases: Set<string>;
  /** One line for the terminal: how many cases of how many, chosen how. */
  label: string;
}

interface Candidate {
  id: string;
  file: string;
  family: string;
  risk: string;
  attack: string;
  environment: string;
}

const under = (ref: string, prefixes: readonly string[] | undefined) => !prefixes || prefixes.some((p) => ref === p || ref.startsWith(`${p}/`));

/** The bundled cases folder: `cases` of the installed vera-safety (the repository's own in a checkout). */
export function bundledCasesDir(): string {
  return join(packageRoot(), 'cases');
}

/**
 * The cases the preset runs. Filters apply to every case (composed and hand-written): a risk
 * category or leaf, an environment, an attack method or its prefix. `sample: 'all'` keeps every
 * case that passes; `'stratified'` (or a number n) keeps 2 (n) per risk category, spread over
 * environments, attack methods and families — the same cases every time — plus every hand-written
 * case that passes (there are few). A filter value that names nothing in the library is an error
 * that lists what it could be.
 */
export async function selectLibraryCases(preset: LibraryPreset, dir = bundledCasesDir()): Promise<LibrarySelection> {
  const index = libraryIndex.parse(JSON.parse(await readFile(join(dir, 'bench', LIBRARY_INDEX_FILE), 'utf8')));
  const composed: Candidate[] = index.cases.map((c: LibraryIndexEntry) => ({ ...c, file: `bench/${c.file}` }));
  const handWritten = preset.handWritten ? await handWrittenCases(dir) : [];
  const everything = [...composed, ...handWritten];
  for (const [field, values, of] of [
    ['categories', preset.categories, (c: Candidate) => c.risk],
    ['environments', preset.environments, (c: Candidate) => c.environment],
    ['attacks', preset.attacks, (c: Candidate) => c.attack],
  ] as const) {
    for (const value of values ?? []) {
      if (everything.some((c) => under(of(c), [value]))) continue;
      const known = [...new Set(everything.map((c) => of(c).split('/')[0]!))].sort();
      throw new Error(`vera(): library.${field}: "${value}" names nothing in the bundled library (it has: ${known.join(', ')}, and their leaves)`);
    }
  }
  const passes = (c: Candidate) => under(c.risk, preset.categories) && under(c.environment, preset.environments) && under(c.attack, preset.attacks);
  const pool = composed.filter(passes);
  const chosen = preset.sample === 'all' ? pool : stratified(pool, preset.sample === 'stratified' ? 2 : preset.sample);
  const hand = handWritten.filter(passes);
  const cases = [...chosen, ...hand];
  if (cases.length === 0) throw new Error('vera(): library: no bundled case passes all of categories, environments and attacks together');
  const how = preset.sample === 'all' ? 'all' : `${preset.sample === 'stratified' ? 2 : preset.sample} per risk category`;
  return {
    dir,
    files: [...new Set(cases.map((c) => c.file))].sort(),
    cases: new Set(cases.map((c) => c.id)),
    label: `${chosen.length} library cases (${how} of the ${pool.length} that pass the filters)${hand.length ? ` and ${hand.length} hand-written` : ''}`,
  };
}

/**
 * n cases per risk category: each pick the case whose environment, attack method and family the
 * category has used least so far, then the fewest suite files (less to collect), then index order.
 */
function stratified(pool: readonly Candidate[], n: number): Candidate[] {
  const byCategory = new Map<string, Candidate[]>();
  for (const c of pool) {
    const category = c.risk.split('/')[0]!;
    byCategory.set(category, [...(byCategory.get(category) ?? []), c]);
  }
  const picked: Candidate[] = [];
  for (const [, candidates] of [...byCategory].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const used = {
      environment: new Map<string, number>(),
      attack: new Map<string, number>(),
      family: new Map<string, number>(),
      file: new Map<string, number>(),
    };
    const mine: Candidate[] = [];
    while (mine.length < n && mine.length < candidates.length) {
      const cost = (c: Candidate) => [
        used.family.get(c.family) ?? 0,
        used.environment.get(c.environment) ?? 0,
        used.attack.get(c.attack) ?? 0,
        mine.length > 0 && !used.file.has(c.file) ? 1 : 0,
      ];
      let best: Candidate | undefined;
      let bestCost: number[] = [];
      for (const c of candidates) {
        if (mine.includes(c)) continue;
        const k = cost(c);
        if (!best || lexicographicallyLess(k, bestCost)) {
          best = c;
          bestCost = k;
        }
      }
      mine.push(best!);
      for (const key of ['environment', 'attack', 'family', 'file'] as const) used[key].set(best![key], (used[key].get(best![key]) ?? 0) + 1);
    }
    picked.push(...mine);
  }
  return picked;
}

function lexicographicallyLess(a: readonly number[], b: readonly number[]): boolean {
  const i = a.findIndex((v, j) => v !== b[j]);
  return i >= 0 && a[i]! < b[i]!;
}

/** The hand-written cases: case files directly under `cases/<environment>/` (not the composed `bench`). */
async function handWrittenCases(dir: string): Promise<Candidate[]> {
  const found: Candidate[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.case.yaml')) continue;
    const file = relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (file.startsWith('bench/') || file.split('/').length !== 2) continue;
    const parsed = parseCaseFileCached(join(dir, file), await readFile(join(dir, file), 'utf8'));
    if (!parsed.ok) throw new Error(`vera(): the bundled case file ${file} does not load: ${parsed.problems[0]?.message ?? 'unknown problem'}`);
    for (const { spec } of parsed.cases) {
      found.push({ id: spec.id, file, family: spec.id, risk: spec.taxonomy.risk, attack: spec.taxonomy.attack, environment: spec.taxonomy.environment });
    }
  }
  return found.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
