import { stat } from 'node:fs/promises';
import { basename, relative, resolve } from 'node:path';
import type { SafetyRecord } from '../../engine/record-writer.js';
import { loadRecords } from '../../reporters/records/load-records.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import { RECORD_SOURCE_PREFIX, type TreeKind } from '../taxonomy/taxonomy-schema.js';
import { addEvidence, type Change } from './operations.js';
import { tokens } from './sources/document-corpus.js';

/**
 * The paper's feedback from execution into exploration: safety records of past runs (the
 * `.vera/records` the plugin writes) steer the next exploration round.
 *   - an area (a risk leaf, an attack leaf) where agents were attacked successfully (ASR > 0) or
 *     where most runs were not applicable (the attack never reached the agent) becomes a query
 *     of the frontier: find more on what broke, and on how the attack really arrives;
 *   - a violated run becomes evidence of the risk and attack nodes it exercised, as a source of
 *     kind `record` with the id `record:<case id>@<threat model>`.
 *
 * Record evidence supports existing nodes only and never counts toward the sources a new leaf
 * needs (records never touch pending candidates). A case is built from the trees, so its
 * violation shows that a class the trees already have happens against real agents; it says
 * nothing independent about whether a *new* class exists — counting it would let a run of
 * generated cases vouch for the taxonomy they were generated from. It does keep a node alive
 * when documents retract their own evidence: a verified violation is still evidence the harm
 * happens.
 */

/** What exploration reads of a safety record (validated by `loadRecords` against the record schema). */
export type FeedbackRecord = Pick<SafetyRecord, 'caseId' | 'title' | 'taxonomy' | 'threatModel' | 'status'> & {
  /** The record's file, relative to the records directory (no absolute paths in the outputs). */
  file: string;
};

/**
 * The newest record per case × threat model × attempt under `dir` (`loadRecords`, which
 * validates each against the record schema). A directory that does not exist, a file that is not
 * JSON, or a malformed record is one error naming the directory or the file and the field.
 */
export async function loadFeedbackRecords(dir: string, cwd: string): Promise<FeedbackRecord[]> {
  const root = resolve(cwd, dir);
  const info = await stat(root).catch(() => undefined);
  if (!info) throw new Error(`--records ${dir}: no such directory`);
  const loaded = await loadRecords(dir, { cwd });
  if (loaded.problems.length > 0) {
    const more = loaded.problems.length > 1 ? ` (and ${loaded.problems.length - 1} more)` : '';
    throw new Error(`--records ${dir}: malformed record ${loaded.problems[0]}${more}`);
  }
  return loaded.records.map(({ file, record }) => ({
    caseId: record.caseId,
    title: record.title,
    taxonomy: record.taxonomy,
    threatModel: record.threatModel,
    status: record.status,
    file: relative(root, file) || basename(file),
  }));
}

export interface RecordQuery {
  query: string;
  /** Why: `violated` (ASR > 0) or `not-applicable` (N/A-heavy). */
  reason: 'violated' | 'not-applicable';
  tree: Extract<TreeKind, 'risks' | 'attacks'>;
  node: string;
  /** What happened, in a sentence (the changelog's detail). */
  detail: string;
  sources: string[];
}

export interface RecordFeedback {
  queries: RecordQuery[];
  changes: Change[];
  runs: number;
  /** Record sources added to the trees as evidence. */
  evidence: number;
}

export interface RecordFeedbackOptions {
  /** Share of not-applicable runs from which an area is N/A-heavy (default 0.5). */
  naShare?: number;
}

interface Area {
  tree: 'risks' | 'attacks';
  path: string;
  runs: number;
  violated: number;
  safe: number;
  notApplicable: number;
  /** Counterpart leaves of the violated runs (the attack of a risk area, the risk of an attack area). */
  violatedWith: Map<string, number>;
  /** Environments of the N/A runs. */
  naIn: Map<string, number>;
  violatedSources: string[];
  naSources: string[];
}

export function recordSourceId(record: Pick<FeedbackRecord, 'caseId' | 'threatModel'>): string {
  return `${RECORD_SOURCE_PREFIX}${record.caseId}@${record.threatModel}`;
}

/**
 * Registers every violated record as a source, adds it as evidence to the risk and attack nodes
 * it names (following redirects), and derives the frontier queries of the violated and the
 * N/A-heavy areas. Deterministic: the same records give the same changes, in the same order.
 */
export function applyRecordFeedback(taxonomy: Taxonomy, records: FeedbackRecord[], options: RecordFeedbackOptions = {}): RecordFeedback {
  const naShare = options.naShare ?? 0.5;
  const sorted = [...records].sort((a, b) => compare(a.file, b.file));
  const areas = new Map<string, Area>();
  const changes: Change[] = [];
  let evidence = 0;

  for (const record of sorted) {
    const id = recordSourceId(record);
    for (const tree of ['risks', 'attacks'] as const) {
      const asked = tree === 'risks' ? record.taxonomy.risk : record.taxonomy.attack;
      const path = taxonomy.resolve(tree, asked);
      const key = `${tree}:${path}`;
      const area: Area = areas.get(key) ?? {
        tree,
        path,
        runs: 0,
        violated: 0,
        safe: 0,
        notApplicable: 0,
        violatedWith: new Map(),
        naIn: new Map(),
        violatedSources: [],
        naSources: [],
      };
      areas.set(key, area);
      area.runs++;
      if (record.status === 'violated') {
        area.violated++;
        bump(area.violatedWith, tree === 'risks' ? taxonomy.resolve('attacks', record.taxonomy.attack) : taxonomy.resolve('risks', record.taxonomy.risk));
        if (!area.violatedSources.includes(id)) area.violatedSources.push(id);
      } else if (record.status === 'safe') area.safe++;
      else if (record.status === 'not-applicable') {
        area.notApplicable++;
        bump(area.naIn, taxonomy.resolve('environments', record.taxonomy.environment));
        if (!area.naSources.includes(id)) area.naSources.push(id);
      }
    }
    if (record.status !== 'violated') continue;
    taxonomy.sources[id] ??= { title: `Safety record: ${record.title} (${record.threatModel})`, kind: 'record', origin: `records:${record.file}` };
    for (const tree of ['risks', 'attacks'] as const) {
      const asked = tree === 'risks' ? record.taxonomy.risk : record.taxonomy.attack;
      const found = taxonomy.find(tree, asked);
      if (!found) {
        const pending = taxonomy.trees[tree].pending.some((p) => p.path === taxonomy.resolve(tree, asked));
        const why = pending
          ? 'a pending candidate: safety records support existing nodes only, never the sources a new leaf needs'
          : 'the trees have no such node';
        changes.push({ operation: 'skip', tree, node: asked, sources: [id], detail: `safety record of case ${record.caseId}: ${why}` });
        continue;
      }
      const change = addEvidence(tree, found, asked, id, `safety record: case ${record.caseId} violated under ${record.threatModel}`);
      if (change.operation === 'update') evidence++;
      changes.push(change);
    }
  }

  const queries = deriveQueries(taxonomy, [...areas.values()], naShare);
  for (const q of queries)
    changes.push({
      operation: 'record-query',
      tree: q.tree,
      node: q.node,
      sources: q.sources,
      detail: `query "${q.query}" from the safety records: ${q.detail}`,
    });
  return { queries, changes, runs: sorted.length, evidence };
}

function deriveQueries(taxonomy: Taxonomy, areas: Area[], naShare: number): RecordQuery[] {
  const name = (tree: TreeKind, path: string) => (taxonomy.find(tree, path)?.node.name ?? path.split('/').at(-1)!.replace(/-/g, ' ')).toLowerCase();
  const known = areas.filter((a) => taxonomy.has(a.tree, a.path));
  const treeOrder = (a: Area) => (a.tree === 'risks' ? 0 : 1);
  const violated = known
    .filter((a) => a.violated > 0)
    .sort((a, b) => b.violated - a.violated || asr(b) - asr(a) || treeOrder(a) - treeOrder(b) || compare(a.path, b.path));
  const heavy = known
    .filter((a) => a.runs > 0 && a.notApplicable / a.runs >= naShare)
    .sort(
      (a, b) =>
        b.notApplicable / b.runs - a.notApplicable / a.runs || b.notApplicable - a.notApplicable || treeOrder(a) - treeOrder(b) || compare(a.path, b.path),
    );
  const out: RecordQuery[] = [];
  for (const area of violated) {
    // What worked, named with the node: the risk with the attack that caused it, or the attack with the harm it did.
    const other = top(area.violatedWith);
    const otherTree = area.tree === 'risks' ? 'attacks' : 'risks';
    const judged = area.violated + area.safe;
    out.push({
      query: `${name(area.tree, area.path)} ${name(otherTree, other)}`,
      reason: 'violated',
      tree: area.tree,
      node: area.path,
      detail: `${area.violated} of ${judged} judged runs violated (ASR ${percent(area.violated, judged)}), most with ${otherTree}:${other}`,
      sources: area.violatedSources,
    });
  }
  for (const area of heavy) {
    // The attack never reached the agent there: look for how it arrives in that environment.
    const where = top(area.naIn);
    out.push({
      query: `${name(area.tree, area.path)} ${name('environments', where)}`,
      reason: 'not-applicable',
      tree: area.tree,
      node: area.path,
      detail: `${area.notApplicable} of ${area.runs} runs not applicable (${percent(area.notApplicable, area.runs)}: the attack never reached the agent), most in environments:${where}`,
      sources: area.naSources,
    });
  }
  // A risk area and an attack area of the same runs name the same pair in two orders: one query
  // (the words, not their order, are what retrieval matches), the other area noted with it.
  const byTerms = new Map<string, RecordQuery>();
  for (const q of out) {
    const key = [...new Set(tokens(q.query))].sort().join(' ');
    const kept = byTerms.get(key);
    if (!kept) {
      byTerms.set(key, q);
      continue;
    }
    kept.detail += `; the same query for ${q.tree}:${q.node} (${q.detail})`;
    for (const id of q.sources) if (!kept.sources.includes(id)) kept.sources.push(id);
  }
  return [...byTerms.values()];
}

function asr(area: Area): number {
  const judged = area.violated + area.safe;
  return judged > 0 ? area.violated / judged : 0;
}

function percent(n: number, of: number): string {
  return of > 0 ? `${Math.round((100 * n) / of)}%` : '–';
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** The most frequent key, ties by name: deterministic. */
function top(counts: Map<string, number>): string {
  return [...counts.entries()].sort(([a, x], [b, y]) => y - x || compare(a, b))[0]![0];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
