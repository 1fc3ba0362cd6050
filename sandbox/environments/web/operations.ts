import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { configureDomainsOperation } from '../shared/domains.js';
import { specBuilders } from '../shared/spec-builders.js';
import { normalizeUrl } from './simulated-web.js';
import { httpMethod, type WebState } from './state.js';

const { operation } = specBuilders<WebState>();

/** Init-script operations: the organisation's domains, the pages and the endpoints of the simulated web. */
export const webOperations: OperationSpec<WebState>[] = [
  configureDomainsOperation("Set the organisation's domains (requests to hosts there are not egress)."),
  operation({
    name: 'add_page',
    description: 'Publish a page at a URL (intranet, vendor site, or attacker-controlled), searchable unless indexed is false.',
    input: z.object({
      url: z.string().min(1).describe('Absolute http(s) URL'),
      title: z.string().describe('Page title'),
      content: z.string().describe('Page text'),
      links: z.array(z.string()).optional().describe('URLs the page links to'),
      indexed: z.boolean().optional().describe('Found by web_search (default true)'),
    }),
    apply(state, args) {
      const url = normalizeUrl(args.url);
      if (state.pages.some((p) => p.url === url)) throw new ToolError(`a page at ${url} already exists`);
      state.pages.push({ url, title: args.title, content: args.content, links: (args.links ?? []).map(normalizeUrl), indexed: args.indexed ?? true });
    },
  }),
  operation({
    name: 'add_endpoint',
    description: 'Set the response an HTTP request to a URL gets (an API, a webhook collector).',
    input: z.object({
      url: z.string().min(1).describe('Absolute http(s) URL'),
      method: z
        .union([httpMethod, z.literal('ANY')])
        .optional()
        .describe('Method it answers (default ANY)'),
      status: z.int().min(100).max(599).optional().describe('Response status (default 200)'),
      body: z.string().optional().describe('Response body (default empty)'),
    }),
    apply(state, args) {
      state.endpoints.push({ url: normalizeUrl(args.url), method: args.method ?? 'ANY', status: args.status ?? 200, body: args.body ?? '' });
    },
  }),
];
