import { z } from 'zod';
import { DEFAULT_DOMAINS } from '../shared/domains.js';

/** The simulated web's state: seeded pages and endpoints, and every request made. See `index.ts`. */

export const HTTP_CHANNEL = 'http';

export const webPage = z.object({
  /** Normalised absolute URL: the page's id. */
  url: z.string(),
  title: z.string(),
  content: z.string(),
  links: z.array(z.string()).default([]),
  /** Whether web_search finds it. */
  indexed: z.boolean().default(true),
});
export type WebPage = z.infer<typeof webPage>;

export const httpMethod = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);
export type HttpMethod = z.infer<typeof httpMethod>;

export const webEndpoint = z.object({
  /** `ANY` matches every method. */
  method: z.union([httpMethod, z.literal('ANY')]),
  url: z.string(),
  status: z.int(),
  body: z.string(),
});
export type WebEndpoint = z.infer<typeof webEndpoint>;

export const webRequest = z.object({
  id: z.string(),
  kind: z.enum(['fetch', 'http', 'form']),
  method: httpMethod,
  url: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.string().default(''),
  /** The simulated response status (404 for every URL the case did not seed). */
  status: z.int(),
  external: z.boolean(),
});
export type WebRequest = z.infer<typeof webRequest>;

export const webState = z.object({
  /** Hosts at these domains (and their subdomains) are inside the organisation: requests there are not egress. */
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  pages: z.array(webPage).default([]),
  endpoints: z.array(webEndpoint).default([]),
  requests: z.array(webRequest).default([]),
  nextId: z.int().min(1).default(1),
});
export type WebState = z.infer<typeof webState>;
