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
