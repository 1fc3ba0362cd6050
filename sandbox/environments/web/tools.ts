import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { specBuilders } from '../shared/spec-builders.js';
import { request, responseView, snippetOf } from './simulated-web.js';
import { httpMethod, type WebState } from './state.js';

const { tool } = specBuilders<WebState>();

const MAX_RESULTS = 10;

export const webTools: ToolSpec<WebState>[] = [
  tool({
    name: 'web_search',
    description: 'Search the web; returns result titles, URLs and snippets, best match first.',
    input: z.object({
      query: z.string().min(1).describe('Search terms'),
      limit: z.int().min(1).max(MAX_RESULTS).optional().describe(`Maximum number of results (default ${MAX_RESULTS})`),
    }),
    handler(state, args) {
      const terms = [
        ...new Set(
          args.query
            .toLowerCase()
            .split(/[^\p{L}\p{N}]+/u)
            .filter((t) => t.length > 1),
        ),
      ];
      if (terms.length === 0) throw new ToolError('the query has no words to search for');
      const scored = state.pages
        .filter((p) => p.indexed)
        .map((p, i) => {
          const title = p.title.toLowerCase();
          const text = `${p.url} ${p.content}`.toLowerCase();
          // Title words count double, as search engines weigh titles.
          const score = terms.reduce((s, t) => s + (title.includes(t) ? 2 : 0) + (text.includes(t) ? 1 : 0), 0);
          return { p, i, score };
        })
        .filter((x) => x.score > 0)
        .sort((a, b) => b.score - a.score || a.i - b.i)
        .slice(0, args.limit ?? MAX_RESULTS);
      return {
        query: args.query,
        count: scored.length,
        results: scored.map(({ p }) => ({ url: p.url, title: p.title, snippet: snippetOf(p.content, terms) })),
      };
    },
  }),
  tool({
    name: 'fetch_page',
    description: 'Fetch a web page by URL and return its title, text and links.',
    input: z.object({ url: z.string().min(1).describe('Absolute http(s) URL of the page') }),
    handler(state, args, ctx) {
      const r = request(state, ctx, 'fetch', 'GET', args.url, {}, '');
      const { status } = r;
      if (!r.page) {
        if (status >= 200 && status < 300) return { url: r.request.url, status, title: '', content: r.body, links: [] };
        throw new ToolError(`fetch failed: ${r.request.url} returned ${status} ${r.body}`.trim());
      }
      return { url: r.page.url, status, title: r.page.title, content: r.page.content, links: r.page.links };
    },
  }),
  tool({
    name: 'http_request',
    description: 'Send an HTTP request (API call, webhook) and return the response status and body.',
    input: z.object({
      method: httpMethod.describe('HTTP method'),
      url: z.string().min(1).describe('Absolute http(s) URL'),
      headers: z.record(z.string(), z.string()).optional().describe('Request headers: name → value'),
      body: z.string().optional().describe('Request body (e.g. JSON text)'),
    }),
    handler(state, args, ctx) {
      return responseView(request(state, ctx, 'http', args.method, args.url, { ...(args.headers ?? {}) }, args.body ?? ''));
    },
  }),
  tool({
    name: 'post_form',
    description: 'Submit a web form: POST the fields, URL-encoded, to the form action URL.',
    input: z.object({
      url: z.string().min(1).describe('The form action URL'),
      fields: z.record(z.string(), z.string()).describe('Form fields: name → value'),
    }),
    handler(state, args, ctx) {
      const body = new URLSearchParams(args.fields).toString();
      return responseView(request(state, ctx, 'form', 'POST', args.url, { 'content-type': 'application/x-www-form-urlencoded' }, body));
    },
  }),
];
