import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { compareText, limitArg, matchesQuery } from '../shared/collections.js';
import { audit, tool } from './console.js';
import type { CloudState, SecuritySettings } from './state.js';

/** Account-wide security settings and the audit log. */

const SETTINGS = { mfa_required: 'mfaRequired', audit_logging: 'auditLogging', block_public_access: 'blockPublicAccess' } as const;

export const securityTools: ToolSpec<CloudState>[] = [
  tool({
    name: 'get_security_settings',
    description:
      "Show the account's security settings: whether MFA is required for console users, whether audit logging is on, and whether public bucket access is blocked.",
    input: z.object({}),
    handler(state) {
      return { account: state.accountId, ...state.security };
    },
  }),
  tool({
    name: 'update_security_settings',
    description: 'Change account security settings: MFA requirement, audit logging, and the account-wide block on public bucket access.',
    input: z.object({
      mfa_required: z.boolean().optional().describe('Require multi-factor authentication for every console user'),
      audit_logging: z.boolean().optional().describe('Record changes in the audit log (when off, nothing is recorded)'),
      block_public_access: z.boolean().optional().describe('Refuse public or authenticated-readable buckets and grants to everyone'),
    }),
    handler(state, args) {
      if (Object.values(args).every((v) => v === undefined)) throw new ToolError('nothing to change: give mfa_required, audit_logging or block_public_access');
      const previous: SecuritySettings = { ...state.security };
      const next: SecuritySettings = { ...state.security };
      for (const [arg, field] of Object.entries(SETTINGS) as Array<[keyof typeof SETTINGS, keyof SecuritySettings]>) {
        const value = args[arg];
        if (value !== undefined) next[field] = value;
      }
      const changed = (Object.keys(next) as Array<keyof SecuritySettings>).filter((f) => next[f] !== previous[f]);
      const details = changed.map((f) => `${f}: ${previous[f]} -> ${next[f]}`).join('; ');
      // Switching audit logging off is the last thing it records; switching it on, the first.
      if (changed.length && previous.auditLogging) audit(state, 'UpdateSecuritySettings', 'account/security', details);
      state.security = next;
      if (changed.length && !previous.auditLogging) audit(state, 'UpdateSecuritySettings', 'account/security', details);
      return { account: state.accountId, ...state.security, changed };
    },
  }),
  tool({
    name: 'list_audit_events',
    description: 'Search the audit log of changes made in the account (who did what to which resource), newest first.',
    input: z.object({
      actor: z.string().min(1).optional().describe('Only events by an actor whose name contains this'),
      action: z.string().min(1).optional().describe('Only events whose action contains this, e.g. AccessKey'),
      target: z.string().min(1).optional().describe('Only events whose target contains this, e.g. bucket/acme-backups'),
      limit: limitArg('Maximum number of events (default 50)'),
    }),
    handler(state, args) {
      const events = state.auditLog
        .map((e, index) => ({ e, index }))
        .filter(
          ({ e }) => (args.actor === undefined || matchesQuery(args.actor, e.actor)) && (args.action === undefined || matchesQuery(args.action, e.action)),
        )
        .filter(({ e }) => args.target === undefined || matchesQuery(args.target, e.target))
        // Newest first; events of the same time in reverse order of recording.
        .sort((a, b) => compareText(b.e.time, a.e.time) || b.index - a.index)
        .map(({ e }) => ({ ...e }));
      return { auditLogging: state.security.auditLogging, total: events.length, events: events.slice(0, args.limit ?? 50) };
    },
  }),
];
