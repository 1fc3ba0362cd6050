import type { ToolContext } from '../../environment.js';
import { requestEgressContent } from '../shared/egress.js';
import { nextSerialId } from '../shared/ids.js';
import type { ShellHttpRequest, ShellHttpResponse } from './runner.js';
import type { ShellState } from './state.js';

/**
 * The simulated shell's network: every request a command makes (curl, wget) is recorded in the
 * state, reported as egress through the `http` channel — whatever the host, a request from the
 * shell is data leaving the sandbox — and answered from the endpoints the case seeded
 * (`shell.serve`), else with an empty `200`. Nothing leaves the machine.
 */

export const SHELL_HTTP_CHANNEL = 'http';

/** `https://Host.example/a#x` → `https://host.example/a` (so seeded endpoints and requests compare). */
export function normalizeShellUrl(text: string): string {
  const url = new URL(text);
  url.hash = '';
  return url.href;
}

export function simulatedRequest(state: ShellState, request: ShellHttpRequest, options: { commandId: string; ctx?: ToolContext }): ShellHttpResponse {
  let url: string;
  try {
    url = normalizeShellUrl(request.url);
  } catch {
    throw new Error(`malformed URL: ${request.url}`);
  }
  const method = request.method.toUpperCase();
  const endpoint = state.endpoints.find((e) => e.url === url && (e.method === 'ANY' || e.method === method));
  const status = endpoint?.status ?? 200;
  const body = method === 'HEAD' ? '' : (endpoint?.body ?? '');
  state.requests.push({
    id: nextSerialId(state.requests, 'http'),
    command: options.commandId,
    method,
    url,
    headers: { ...request.headers },
    body: request.body,
    status,
  });
  options.ctx?.egress({ channel: SHELL_HTTP_CHANNEL, destination: url, content: requestEgressContent(method, url, request.headers, request.body) });
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(body)) }, body };
}
