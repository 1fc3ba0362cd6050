import { canonicalSourceId, type DocumentSource, type SourceDocument } from './source-document.js';

export const ARXIV_ENDPOINT = 'http://export.arxiv.org/api/query';

export interface ArxivSourceOptions {
  /** The Atom query API (default export.arxiv.org); tests point it at a local server. */
  endpoint?: string;
  /** Per request (default 15 s). */
  timeoutMs?: number;
  /** Injected for tests; default the global fetch. */
  fetch?: typeof fetch;
}

/**
 * arXiv through its Atom query API: each query is a search over all fields, newest versions
 * collapsed to one source id per paper (`arxiv:2403.02691`). It is used only when the network
 * allows: `probe()` says why not, and `vera explore` prints that and goes on without it.
 */
export class ArxivSource implements DocumentSource {
  readonly name = 'arxiv';
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: ArxivSourceOptions = {}) {
    this.endpoint = options.endpoint ?? ARXIV_ENDPOINT;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** `undefined` when the API answers; otherwise a sentence saying why arXiv cannot be used. */
  async probe(): Promise<string | undefined> {
    try {
      await this.request('all:agent', 1);
      return undefined;
    } catch (error) {
      return `arXiv is not reachable at ${this.endpoint} (${(error as Error).message}); exploring without it — pass local documents (--docs) or feeds (--feed) instead`;
    }
  }

  async search(query: string, limit: number, exclude: ReadonlySet<string>): Promise<SourceDocument[]> {
    const terms = query.toLowerCase().match(/[a-z0-9-]+/g) ?? [];
    if (terms.length === 0 || limit <= 0) return [];
    const searchQuery = terms.map((t) => `all:${t}`).join(' AND ');
    // Ask for a few more than needed: papers already read are skipped.
    const feed = await this.request(searchQuery, limit + exclude.size);
    return parseArxivAtom(feed)
      .filter((d) => !exclude.has(d.id))
      .slice(0, limit);
  }

  private async request(searchQuery: string, maxResults: number): Promise<string> {
    const url = `${this.endpoint}?search_query=${encodeURIComponent(searchQuery)}&start=0&max_results=${Math.min(maxResults, 100)}&sortBy=relevance`;
    const response = await this.fetch(url, { signal: AbortSignal.timeout(this.timeoutMs) });
    if (!response.ok) throw new Error(`HTTP ${response.status} from ${this.endpoint}`);
    return response.text();
  }
}

/** Entries of an arXiv Atom feed as documents (title, abstract, authors, abs URL). */
export function parseArxivAtom(xml: string): SourceDocument[] {
  const docs: SourceDocument[] = [];
  for (const entry of xml.match(/<entry\b[\s\S]*?<\/entry>/g) ?? []) {
    const absUrl = text(entry, 'id');
    const arxivId = /arxiv\.org\/abs\/([^\s<]+?)(v\d+)?$/i.exec(absUrl ?? '')?.[1];
    const title = text(entry, 'title');
    if (!arxivId || !title) continue;
    const authors = [...entry.matchAll(/<author\b[\s\S]*?<name>([\s\S]*?)<\/name>/g)].map((m) => decode(m[1]!).trim());
    const summary = text(entry, 'summary') ?? '';
    const published = text(entry, 'published');
    docs.push({
      id: canonicalSourceId(`arxiv:${arxivId}`),
      title: collapse(title),
      text: [collapse(title), authors.length ? `Authors: ${authors.join(', ')}` : '', published ? `Published: ${published}` : '', collapse(summary)]
        .filter(Boolean)
        .join('\n\n'),
      url: `https://arxiv.org/abs/${arxivId}`,
      kind: 'paper',
      origin: 'arxiv',
    });
  }
  return docs;
}

function text(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`).exec(xml);
  return m ? decode(m[1]!).trim() : undefined;
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function decode(s: string): string {
  return s
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
}
