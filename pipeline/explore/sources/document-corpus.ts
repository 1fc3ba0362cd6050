import type { DocumentSource, SourceDocument } from './source-document.js';

/**
 * A fixed set of documents (a local folder, feed files) searchable by query. Ranking is plain
 * term overlap — title hits count triple — with ties broken by id, so retrieval is repeatable.
 * Copies of one source (same id, or same URL) are collapsed: evidence counts distinct sources.
 */
export class DocumentCorpus implements DocumentSource {
  readonly documents: SourceDocument[] = [];
  /** Documents dropped as copies of another: `{ id, duplicateOf }`. */
  readonly duplicates: Array<{ id: string; origin: string; duplicateOf: string }> = [];
  private readonly index: Array<{ doc: SourceDocument; title: Map<string, number>; text: Map<string, number> }> = [];

  constructor(
    readonly name: string,
    documents: SourceDocument[],
  ) {
    const byId = new Map<string, SourceDocument>();
    const byUrl = new Map<string, SourceDocument>();
    for (const doc of [...documents].sort((a, b) => compare(a.origin, b.origin))) {
      const url = doc.url ? normalizeUrl(doc.url) : undefined;
      const first = byId.get(doc.id) ?? (url ? byUrl.get(url) : undefined);
      if (first) {
        this.duplicates.push({ id: doc.id, origin: doc.origin, duplicateOf: first.id });
        continue;
      }
      byId.set(doc.id, doc);
      if (url) byUrl.set(url, doc);
      this.documents.push(doc);
      this.index.push({ doc, title: termCounts(doc.title), text: termCounts(doc.text) });
    }
  }

  async search(query: string, limit: number, exclude: ReadonlySet<string>): Promise<SourceDocument[]> {
    const terms = [...new Set(tokens(query))];
    if (terms.length === 0 || limit <= 0) return [];
    const scored: Array<{ doc: SourceDocument; score: number }> = [];
    for (const { doc, title, text } of this.index) {
      if (exclude.has(doc.id)) continue;
      let score = 0;
      for (const term of terms) score += 3 * (title.get(term) ?? 0) + Math.min(text.get(term) ?? 0, 5);
      if (score > 0) scored.push({ doc, score });
    }
    scored.sort((a, b) => b.score - a.score || compare(a.doc.id, b.doc.id));
    return scored.slice(0, limit).map((s) => s.doc);
  }
}

const STOPWORDS = new Set(
  'the and for with that this from into onto over under are was were been being has have had not but can could would should will may might its their they them then than there these those what which who whom how why when where via per out off all any each our your his her one two its about after before also more most such only other some very just like using used use'.split(
    ' ',
  ),
);

/** Lower-case word stems of at least three characters, stopwords dropped. */
export function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((t) => t.length >= 3 && !STOPWORDS.has(t)).map(stem);
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of tokens(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

function normalizeUrl(url: string): string {
  return url
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/^www\./, '')
    .replace(/#.*$/, '')
    .replace(/\/+$/, '');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
