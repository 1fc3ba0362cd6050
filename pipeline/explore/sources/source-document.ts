import type { DocumentKind } from '../../taxonomy/taxonomy-schema.js';
import type { ConceptOperation } from '../summary-agent.js';

/** One document the summary agent reads: a paper, an advisory, a technique entry, a note. */
export interface SourceDocument {
  /** Canonical source id (lower-case): what taxonomy evidence cites. Two copies of one source share it. */
  id: string;
  title: string;
  text: string;
  url?: string;
  kind: DocumentKind;
  /** Who issued it (front matter `publisher`; see `publisher` in taxonomy-schema.ts). */
  publisher?: string;
  /** Why its URL and title could not be confirmed (front matter `unverified`). */
  unverified?: string;
  /** Where it was read: `docs:papers/x.md`, `feed:atlas.yaml`, `arxiv`. */
  origin: string;
  /**
   * The concepts the document's author declared it supports (front matter `concepts:`), in the
   * summary agent's format: what `vera explore --declared` applies instead of asking a model.
   */
  concepts?: ConceptOperation[];
}

/** Where documents come from. `search` returns up to `limit` documents for a query, skipping `exclude`. */
export interface DocumentSource {
  readonly name: string;
  search(query: string, limit: number, exclude: ReadonlySet<string>): Promise<SourceDocument[]>;
}

/** Lower-cases and keeps only characters a source id allows. */
export function canonicalSourceId(raw: string): string {
  return raw
    .trim()
    .toLowerCase()
    .replace(/\s+/g, '-')
    .replace(/[^a-z0-9:._/-]/g, '')
    .replace(/^[^a-z0-9]+/, '');
}
