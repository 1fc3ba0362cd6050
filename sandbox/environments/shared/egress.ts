import type { EgressRecord } from '../../../engine/trajectory.js';
import type { ToolContext } from '../../environment.js';
import { isExternalAddress } from './domains.js';

/**
 * Reports `record` as egress when its destination is an address outside the organisation's
 * `domains` — what mail, file shares, query exports and invitations have in common. Returns
 * whether it did.
 */
export function egressToAddress(ctx: ToolContext, domains: readonly string[], record: EgressRecord): boolean {
  if (!isExternalAddress(record.destination, domains)) return false;
  ctx.egress(record);
  return true;
}

/** Everything an HTTP request carries out: request line, headers and body (the web's and the shell's egress content). */
export function requestEgressContent(method: string, url: string, headers: Record<string, string>, body: string): string {
  const lines = [`${method} ${url}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return body === '' ? lines.join('\n') : `${lines.join('\n')}\n\n${body}`;
}
