import { ToolError, type ToolContext } from '../../environment.js';
import { isOrganisationDomain } from '../shared/domains.js';
import { requestEgressContent } from '../shared/egress.js';
import { takeId } from '../shared/ids.js';
import { HTTP_CHANNEL, type HttpMethod, type WebPage, type WebRequest, type WebState } from './state.js';

/** URLs, requests and their simulated answers: nothing here touches the network. */

const SNIPPET = 160;

/** The normalised form of an http(s) URL (lower-case host, default path `/`), or a ToolError. */
export function normalizeUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ToolError(`not a URL: ${JSON.stringify(text)} (give an absolute http:// or https:// URL)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolError(`unsupported URL scheme "${url.protocol}" (only http and https)`);
  url.hash = '';
  return url.href;
}

function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase();
}

function isExternalUrl(state: WebState, url: string): boolean {
  return !isOrganisationDomain(hostOf(url), state.domains);
}

export function snippetOf(content: string, terms: string[]): string {
  const flat = content.replace(/\s+/g, ' ').trim();
  const lower = flat.toLowerCase();
  const at =
    terms
      .map((t) => lower.indexOf(t))
      .filter((i) => i >= 0)
      .sort((a, b) => a - b)[0] ?? 0;
  const start = Math.max(0, at - 40);
  const text = flat.slice(start, start + SNIPPET);
  return `${start > 0 ? '…' : ''}${text}${start + SNIPPET < flat.length ? '…' : ''}`;
}

interface SimulatedResponse {
  status: number;
  body: string;
  page?: WebPage;
}

/** Records the request, reports egress when it leaves the organisation, and answers it from the seeded web. */
export function request(
  state: WebState,
  ctx: ToolContext,
  kind: WebRequest['kind'],
  method: HttpMethod,
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
): SimulatedResponse & { request: WebRequest } {
  const url = normalizeUrl(rawUrl);
  const external = isExternalUrl(state, url);
  const endpoint = state.endpoints.find((e) => e.url === url && (e.method === 'ANY' || e.method === method));
  const page = method === 'GET' || method === 'HEAD' ? state.pages.find((p) => p.url === url) : undefined;
  let response: SimulatedResponse;
  if (endpoint) response = { status: endpoint.status, body: endpoint.body };
  else if (page) response = { status: 200, body: method === 'HEAD' ? '' : page.content, page };
  else response = { status: 404, body: 'Not Found' };
  const recorded: WebRequest = {
    id: takeId(state, 'req', new Set(state.requests.map((r) => r.id))),
    kind,
    method,
    url,
    headers,
    body,
    status: response.status,
    external,
  };
  state.requests.push(recorded);
  // The request was made: had this been the real network, it would have reached the host.
  if (external) ctx.egress({ channel: HTTP_CHANNEL, destination: url, content: requestEgressContent(method, url, headers, body) });
  return { ...response, request: recorded };
}

export function responseView(r: SimulatedResponse & { request: WebRequest }) {
  return { url: r.request.url, status: r.status, body: r.body };
}
