import type { DocumentSource, SourceDocument } from './source-document.js';

/**
 * A fixed set of documents (a local folder, feed files) searchable by query. Ranking is plain
 * term overlap — title hits count triple — with ties broken by id, so retrieval is repeatable.
 * Copies of one source are collapsed — the same id, the same URL, the same text once normalised
 * (case, spacing, punctuation), or nearly the same text (word 5-gram shingles, Jaccard ≥ 0.9: a
 * re-post with a new footer) — so evidence counts distinct sources, not copies.
 */
export class DocumentCorpus implements DocumentSource {
  readonly documents: SourceDocument[] = [];
  /** Documents dropped as copies of another: `{ id, duplicateOf }`. */
  readonly duplicates: Array<{ id: string; origin: string; duplicateOf: string; how: 'id' | 'url' | 'text' | 'near-text' }> = [];
  private readonly index: Array<{ doc: SourceDocument; title: Map<string, number>; text: Map<string, number> }> = [];

  constructor(
    readonly name: string,
    documents: SourceDocument[],
  ) {
    const byId = new Map<string, SourceDocument>();
    const byUrl = new Map<string, SourceDocument>();
    const byText = new Map<string, SourceDocument>();
    const shingled: Array<{ doc: SourceDocument; shingles: Set<string> }> = [];
    for (const doc of [...documents].sort((a, b) => compare(a.origin, b.origin))) {
      const url = doc.url ? normalizeUrl(doc.url) : undefined;
      const text = normalizeText(doc.text);
      const shingles = shinglesOf(text);
      const copy: { first: SourceDocument; how: 'id' | 'url' | 'text' | 'near-text' } | undefined = byId.has(doc.id)
        ? { first: byId.get(doc.id)!, how: 'id' }
        : url && byUrl.has(url)
          ? { first: byUrl.get(url)!, how: 'url' }
          : byText.has(text)
            ? { first: byText.get(text)!, how: 'text' }
            : nearCopy(shingles, shingled);
      if (copy) {
        this.duplicates.push({ id: doc.id, origin: doc.origin, duplicateOf: copy.first.id, how: copy.how });
        continue;
      }
      byId.set(doc.id, doc);
      if (url) byUrl.set(url, doc);
      if (text) byText.set(text, doc);
      shingled.push({ doc, shingles });
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

/** The words of a text, lower-case, one space apart: copies differing in case, spacing or punctuation are equal. */
export function normalizeText(text: string): string {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/** Jaccard similarity of two texts' word 5-gram shingles at which one is a copy of the other. */
export const NEAR_COPY = 0.9;
const SHINGLE = 5;

function shinglesOf(normalized: string): Set<string> {
  const words = normalized.split(' ').filter(Boolean);
  const out = new Set<string>();
  for (let i = 0; i + SHINGLE <= words.length; i++) out.add(words.slice(i, i + SHINGLE).join(' '));
  return out;
}

function nearCopy(
  shingles: Set<string>,
  kept: ReadonlyArray<{ doc: SourceDocument; shingles: Set<string> }>,
): { first: SourceDocument; how: 'near-text' } | undefined {
  // Short texts (a title and a line) have too few shingles to tell a copy from a neighbour.
  if (shingles.size < 20) return undefined;
  for (const other of kept) {
    if (other.shingles.size < 20) continue;
    let shared = 0;
    for (const s of shingles) if (other.shingles.has(s)) shared++;
    if (shared / (shingles.size + other.shingles.size - shared) >= NEAR_COPY) return { first: other.doc, how: 'near-text' };
  }
  return undefined;
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
