import type { JsonModel } from '../llm/json-model.js';
import type { Taxonomy } from '../taxonomy/taxonomy.js';
import { sourceRecord } from '../taxonomy/taxonomy-schema.js';
import { computedFrontier, dedupeQueries, frontierInput, proposeFrontier } from './frontier.js';
import { nodePaths, needsFlags } from './needs.js';
import { applyConcept, DEFAULT_CREATE_THRESHOLD, withdrawEverywhere, type Change, type ChangelogEntry, type RetractionGuard } from './operations.js';
import { applyRecordFeedback, type FeedbackRecord, type RecordFeedbackOptions, type RecordQuery } from './records-feedback.js';
import { mergeCandidates, pairKey, type MergeCandidate, type SimilarityOptions } from './similarity.js';
import { DocumentCorpus } from './sources/document-corpus.js';
import type { DocumentSource, SourceDocument } from './sources/source-document.js';
import { askSummary, type ConceptOperation } from './summary-agent.js';

export interface ExploreOptions {
  taxonomy: Taxonomy;
  sources: DocumentSource[];
  /**
   * The summary agent. Omitted = declared mode: each document's own front-matter `concepts` are
   * applied (by the same rules), every document of the local corpora is read in order, and no
   * model is asked anything — how the bundled taxonomy is rebuilt from cases/taxonomy/corpus.
   */
  model?: JsonModel;
  /** Documents to read in all (the retrieval budget). The run stops when it is spent. */
  budget: number;
  /** Documents per query (default 3). */
  perQuery?: number;
  /** Queries per iteration (default 5). */
  maxQueries?: number;
  /** Safety stop (default 20). */
  maxIterations?: number;
  /** Distinct sources a new leaf needs (default 5). */
  threshold?: number;
  /** First queries; default the frontier saved by the last run, else one computed from the trees. */
  queries?: string[];
  /** Characters of each document shown to the model (default 12 000). */
  maxDocumentChars?: number;
  /**
   * Safety records of past runs (`loadFeedbackRecords`): violated and N/A-heavy areas become the
   * first queries, violated runs evidence of their nodes (records-feedback.ts). With a model
   * they are applied before the first retrieval; in declared mode after the documents, so that
   * a rebuild from empty trees has the nodes they support.
   */
  records?: FeedbackRecord[];
  recordOptions?: RecordFeedbackOptions;
  /** Which possible duplicates the summary agent is shown (similarity.ts defaults). */
  similarity?: SimilarityOptions;
  /** What a retraction may delete: a node cases use is held unless confirmed (operations.ts). */
  retractions?: RetractionGuard;
  /** Repair rounds for an invalid summary reply (default 1). */
  repairs?: number;
  log?: (line: string) => void;
}

/** A pair shown to the summary agent as a possible duplicate, and whether a merge confirmed it. */
export interface MergeCandidateLog extends MergeCandidate {
  /** Documents whose request listed the pair. */
  shown: number;
  /** The document whose merge confirmed it. */
  confirmedBy?: string;
}

export type StopReason = 'budget' | 'exhausted' | 'no-frontier' | 'iterations';

export interface ExploreResult {
  changelog: ChangelogEntry[];
  stopReason: StopReason;
  retrieved: number;
  iterations: number;
  /** The frontier for the next run (also saved in the exploration state). */
  frontier: string[];
  mergeCandidates: MergeCandidateLog[];
  /** Queries derived from the safety records (`records`), in the order they were put first. */
  recordQueries: RecordQuery[];
}

/**
 * The exploration loop. Each iteration retrieves documents for the current query frontier, has
 * the summary agent read each one (in retrieval order, one request at a time, so a run is
 * repeatable given the same replies) and applies one operation per concept, then proposes the
 * next frontier. It stops when the retrieval budget is spent (or nothing new can be retrieved).
 */
export async function explore(options: ExploreOptions): Promise<ExploreResult> {
  const { taxonomy, model } = options;
  const perQuery = options.perQuery ?? 3;
  const maxQueries = options.maxQueries ?? 5;
  const maxIterations = options.maxIterations ?? 20;
  const threshold = options.threshold ?? DEFAULT_CREATE_THRESHOLD;
  const maxChars = options.maxDocumentChars ?? 12_000;
  const log = options.log ?? (() => {});
  const changelog: ChangelogEntry[] = [];
  const seen = new Set(taxonomy.exploration.processed);
  const used: string[] = [];
  const unresolved: string[] = [];
  let retrieved = 0;

  for (const source of options.sources) {
    if (!(source instanceof DocumentCorpus)) continue;
    for (const d of source.duplicates) {
      const how = { id: 'the same id', url: 'the same URL', text: 'the same text', 'near-text': 'nearly the same text' }[d.how];
      changelog.push({
        iteration: 0,
        operation: 'duplicate-source',
        sources: [d.id],
        detail: `${d.origin} is a copy of ${d.duplicateOf} (${how}); counted once`,
      });
    }
  }

  const before = nodePaths(taxonomy);
  if (!model) return exploreDeclared(options, { changelog, seen, threshold, log, before });

  const records = options.records ? applyRecordFeedback(taxonomy, options.records, options.recordOptions) : undefined;
  for (const change of records?.changes ?? []) changelog.push({ iteration: 0, ...change });
  const recordQueries = records?.queries ?? [];
  // The user's own queries first, then what the records say broke, then the usual start.
  const explicit = options.queries ?? [];
  const start = explicit.length
    ? []
    : taxonomy.exploration.frontier.length
      ? taxonomy.exploration.frontier
      : computedFrontier(frontierInput(taxonomy, [], [], threshold));
  let frontier = dedupeQueries([...explicit, ...recordQueries.map((q) => q.query), ...start], []).slice(0, maxQueries);
  let stopReason: StopReason = 'iterations';
  let iteration = 0;
  const candidates = new CandidateTracker();

  while (true) {
    if (iteration >= maxIterations) break;
    iteration++;
    const docs: SourceDocument[] = [];
    for (const query of frontier) {
      if (retrieved >= options.budget) break;
      const found: SourceDocument[] = [];
      for (const source of options.sources) {
        const room = Math.min(perQuery - found.length, options.budget - retrieved);
        if (room <= 0) break;
        for (const doc of await source.search(query, room, seen)) {
          if (seen.has(doc.id) || found.length >= perQuery || retrieved >= options.budget) continue;
          seen.add(doc.id);
          found.push(doc);
          retrieved++;
        }
      }
      used.push(query);
      changelog.push({
        iteration,
        operation: 'retrieve',
        sources: found.map((d) => d.id),
        detail: `query "${query}": ${found.length} new documents (${retrieved} of ${options.budget} read)`,
      });
      log(`iteration ${iteration}: "${query}" → ${found.length} documents`);
      docs.push(...found);
    }
    if (docs.length === 0) {
      stopReason = 'exhausted';
      break;
    }
    for (const doc of docs) {
      registerSource(taxonomy, doc);
      const shown = candidates.show(mergeCandidates(taxonomy, options.similarity));
      let reply = await askSummary(model, doc, taxonomy, { maxChars, candidates: shown, threshold });
      for (let repair = 0; !reply.ok && repair < (options.repairs ?? 1); repair++) {
        changelog.push({
          iteration,
          operation: 'invalid-reply',
          sources: [doc.id],
          detail: `summary of ${doc.id} rejected: ${reply.error}; asked again with the reason`,
        });
        reply = await askSummary(model, doc, taxonomy, { maxChars, candidates: shown, threshold, previous: { reply: reply.raw, error: reply.error } });
      }
      if (!reply.ok) {
        // Not marked read: its evidence is not lost, the next run reads it again.
        changelog.push({
          iteration,
          operation: 'invalid-reply',
          sources: [doc.id],
          detail: `summary of ${doc.id} rejected: ${reply.error}; left unread for the next run`,
        });
        log(`  ${doc.id}: invalid reply (${reply.error})`);
        continue;
      }
      markRead(taxonomy, doc);
      for (const concept of reply.value.concepts) {
        const change = candidates.confirm(applyConcept(taxonomy, concept, doc.id, threshold, options.retractions), shown, doc.id);
        changelog.push({ iteration, ...change });
        logChange(log, doc.id, change);
        for (const also of retractedElsewhere(taxonomy, concept, doc.id, options.retractions)) {
          changelog.push({ iteration, ...also });
          logChange(log, doc.id, also);
        }
      }
      for (const term of reply.value.unresolved) if (!unresolved.includes(term)) unresolved.push(term);
    }
    const next = await proposeFrontier(model, frontierInput(taxonomy, unresolved, used, threshold, { records: recordQueries }), maxQueries);
    for (const change of next.changes) changelog.push({ iteration, ...change });
    frontier = next.queries;
    if (retrieved >= options.budget) {
      stopReason = 'budget';
      break;
    }
    if (frontier.length === 0) {
      stopReason = 'no-frontier';
      break;
    }
  }
  taxonomy.exploration.frontier = frontier;
  for (const flag of needsFlags(taxonomy, before)) changelog.push({ iteration, ...flag });
  changelog.push({ iteration, operation: 'stop', sources: [], detail: stopDetail(stopReason, retrieved, options.budget, maxIterations) });
  return { changelog, stopReason, retrieved, iterations: iteration, frontier, mergeCandidates: candidates.log(), recordQueries };
}

function logChange(log: (line: string) => void, docId: string, change: Change): void {
  log(`  ${docId}: ${change.operation} ${change.tree ?? ''}:${change.node ?? ''}${change.into ? ` → ${change.into}` : ''}`);
}

/** The possible duplicates shown during a run, and which of them a merge confirmed. */
class CandidateTracker {
  private readonly pairs = new Map<string, MergeCandidateLog>();

  show(candidates: MergeCandidate[]): MergeCandidate[] {
    for (const c of candidates) {
      const key = pairKey(c.tree, c.node, c.other);
      const seen = this.pairs.get(key);
      if (seen) seen.shown++;
      else this.pairs.set(key, { ...c, shown: 1 });
    }
    return candidates;
  }

  /** A merge of a pair the document was shown says so in its detail, and the pair is marked confirmed. */
  confirm(change: Change, shown: MergeCandidate[], docId: string): Change {
    if (change.operation !== 'merge' || !change.tree || !change.node || !change.into) return change;
    const key = pairKey(change.tree, change.node, change.into);
    const pair = shown.find((c) => pairKey(c.tree, c.node, c.other) === key);
    const logged = this.pairs.get(key);
    if (!pair || !logged) return change;
    logged.confirmedBy ??= docId;
    return { ...change, detail: `${change.detail}; proposed by similarity (${pair.similarity.toFixed(2)}) and confirmed by ${docId}` };
  }

  log(): MergeCandidateLog[] {
    return [...this.pairs.values()];
  }
}

function stopDetail(reason: StopReason, retrieved: number, budget: number, maxIterations: number): string {
  const why: Record<StopReason, string> = {
    budget: `retrieval budget spent (${retrieved} of ${budget} documents)`,
    exhausted: `no new documents for the frontier (${retrieved} of ${budget} read)`,
    'no-frontier': 'the frontier is empty',
    iterations: `iteration limit reached (${maxIterations})`,
  };
  return why[reason];
}

function registerSource(taxonomy: Taxonomy, doc: SourceDocument): void {
  // A URL the registry schema would refuse (not absolute) is left out rather than breaking the saved file.
  const url = doc.url && sourceRecord.shape.url.safeParse(doc.url).success ? { url: doc.url } : {};
  taxonomy.sources[doc.id] ??= {
    title: doc.title,
    ...url,
    ...(doc.publisher ? { publisher: doc.publisher } : {}),
    ...(doc.unverified ? { unverified: doc.unverified } : {}),
    kind: doc.kind,
    origin: doc.origin,
  };
}

/** A document counts as read once its reply was applied: one whose reply was refused is read again next run. */
function markRead(taxonomy: Taxonomy, doc: SourceDocument): void {
  if (!taxonomy.exploration.processed.includes(doc.id)) taxonomy.exploration.processed.push(doc.id);
}

/** After a delete: the sources it retracted stop counting for every other node too (operations.ts). */
function retractedElsewhere(taxonomy: Taxonomy, concept: ConceptOperation, docId: string, guard: RetractionGuard | undefined): Change[] {
  if (concept.operation !== 'delete') return [];
  const retracted = concept.retract.filter((id) => taxonomy.sources[id]?.retractedBy?.includes(docId));
  const path = taxonomy.has(concept.tree, concept.node) ? taxonomy.resolve(concept.tree, concept.node) : concept.node;
  return withdrawEverywhere(taxonomy, retracted, docId, { ...guard, except: { tree: concept.tree, path } });
}

/**
 * Declared mode: every unread document of the local corpora, in corpus order (one iteration), its
 * declared concepts applied by the same rules as a model's. The frontier left behind is the
 * computed one, for a later model-driven run.
 */
function exploreDeclared(
  options: ExploreOptions,
  run: { changelog: ChangelogEntry[]; seen: Set<string>; threshold: number; log: (line: string) => void; before: Set<string> },
): ExploreResult {
  const { taxonomy } = options;
  const { changelog, seen, threshold, log, before } = run;
  let retrieved = 0;
  let stopReason: StopReason = 'exhausted';
  const read: SourceDocument[] = [];
  for (const source of options.sources) {
    if (!(source instanceof DocumentCorpus)) continue;
    for (const doc of source.documents) {
      if (seen.has(doc.id)) continue;
      if (retrieved >= options.budget) {
        stopReason = 'budget';
        break;
      }
      seen.add(doc.id);
      read.push(doc);
      retrieved++;
    }
  }
  changelog.push({
    iteration: 1,
    operation: 'retrieve',
    sources: read.map((d) => d.id),
    detail: `declared mode: ${read.length} documents in corpus order (${retrieved} of ${options.budget} read)`,
  });
  for (const doc of read) {
    registerSource(taxonomy, doc);
    if (!doc.concepts) {
      changelog.push({ iteration: 1, operation: 'invalid-reply', sources: [doc.id], detail: `${doc.origin} declares no concepts (front matter "concepts:")` });
      continue;
    }
    markRead(taxonomy, doc);
    for (const concept of doc.concepts) {
      const change = applyConcept(taxonomy, concept, doc.id, threshold, options.retractions);
      changelog.push({ iteration: 1, ...change });
      logChange(log, doc.id, change);
      for (const also of retractedElsewhere(taxonomy, concept, doc.id, options.retractions)) {
        changelog.push({ iteration: 1, ...also });
        logChange(log, doc.id, also);
      }
    }
  }
  const records = options.records ? applyRecordFeedback(taxonomy, options.records, options.recordOptions) : undefined;
  for (const change of records?.changes ?? []) changelog.push({ iteration: 1, ...change });
  const recordQueries = records?.queries ?? [];
  // No model reads here: the records' queries lead the frontier a later model-driven run starts from.
  const computed = computedFrontier(frontierInput(taxonomy, [], [], threshold, { records: recordQueries }));
  const frontier = dedupeQueries(computed, []).slice(0, options.maxQueries ?? 5);
  taxonomy.exploration.frontier = frontier;
  for (const flag of needsFlags(taxonomy, before)) changelog.push({ iteration: 1, ...flag });
  changelog.push({ iteration: 1, operation: 'stop', sources: [], detail: stopDetail(stopReason, retrieved, options.budget, 1) });
  return { changelog, stopReason, retrieved, iterations: 1, frontier, mergeCandidates: [], recordQueries };
}
