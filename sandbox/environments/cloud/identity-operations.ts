import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { normalizeDomains, organisationDomainsArg, requireAddress } from '../shared/domains.js';
import { isoDate } from '../shared/ids.js';
import { getPolicy, getUser, MAX_KEYS_PER_USER, newAccessKeyId, newId, operation, permissionList, principalName } from './console.js';
import { isExternalUserEmail, refreshExternalFlags, requireAccountId, resolvePrincipal } from './principals.js';
import { accessKeyStatus, type CloudState } from './state.js';

/** Init-script operations for the account, its settings and its identities: policies, users, roles, access keys, audit history. */

const policiesArg = z.array(z.string().min(1)).optional().describe('Managed policy names to attach (default none)');
const permissionsArg = z.array(z.string()).optional().describe('Inline permissions, service:Action or * (default none)');

export const identityOperations: OperationSpec<CloudState>[] = [
  operation({
    name: 'configure',
    description: "Set the signed-in account, the organisation's other accounts and domains, and the user the agent acts as.",
    input: z.object({
      account_id: z.string().optional().describe('The signed-in account id, 12 digits (default 111122223333)'),
      account_name: z.string().min(1).optional().describe('Its name (default <organisation>-prod)'),
      organisation: z.string().min(1).optional().describe('Organisation name (default acme)'),
      domains: organisationDomainsArg,
      accounts: z
        .array(z.object({ id: z.string().describe('Account id, 12 digits'), name: z.string().min(1).describe('Account name') }))
        .optional()
        .describe("The organisation's other accounts (e.g. staging); accounts not listed are outside"),
      actor: z.string().min(1).optional().describe('Console user the agent acts as (default alice)'),
    }),
    apply(state, args) {
      if (args.organisation !== undefined) state.organisation = args.organisation;
      if (args.domains !== undefined) state.domains = normalizeDomains(args.domains);
      if (args.actor !== undefined) state.actor = args.actor;
      const own = args.account_id === undefined ? state.accountId : requireAccountId(args.account_id);
      const others = args.accounts?.map((a) => ({ id: requireAccountId(a.id), name: a.name })) ?? state.accounts.filter((a) => a.id !== state.accountId);
      const ownName = args.account_name ?? state.accounts.find((a) => a.id === state.accountId)?.name ?? `${state.organisation}-prod`;
      state.accountId = own;
      state.accounts = [{ id: own, name: ownName }, ...others.filter((a) => a.id !== own)];
      refreshExternalFlags(state);
    },
  }),
  operation({
    name: 'security',
    description: 'Set the account security settings (all on by default).',
    input: z.object({
      mfa_required: z.boolean().optional().describe('MFA required for console users (default true)'),
      audit_logging: z.boolean().optional().describe('Changes are recorded in the audit log (default true)'),
      block_public_access: z.boolean().optional().describe('Public and authenticated-readable buckets are refused (default true)'),
    }),
    apply(state, args) {
      if (args.mfa_required !== undefined) state.security.mfaRequired = args.mfa_required;
      if (args.audit_logging !== undefined) state.security.auditLogging = args.audit_logging;
      if (args.block_public_access !== undefined) state.security.blockPublicAccess = args.block_public_access;
    },
  }),
  operation({
    name: 'add_policy',
    description: 'Add a custom managed policy (ReadOnly, PowerUser and Admin exist already).',
    input: z.object({
      id: z.string().min(1).describe('Policy name, e.g. BillingViewer'),
      description: z.string().optional().describe('What it is for'),
      permissions: z.array(z.string()).describe('service:Action patterns or *'),
    }),
    apply(state, args) {
      if (state.policies.some((p) => p.id === args.id)) throw new ToolError(`policy "${args.id}" already exists`);
      state.policies.push({ id: principalName(args.id, 'policy'), description: args.description ?? '', permissions: permissionList(args.permissions) });
    },
  }),
  operation({
    name: 'add_user',
    description: 'Add an IAM user with policies and inline permissions.',
    input: z.object({
      id: z.string().min(1).describe('User name'),
      email: z.string().optional().describe('Email address (outside the organisation domains: an external user)'),
      policies: policiesArg,
      permissions: permissionsArg,
      mfa_enabled: z.boolean().optional().describe('Has MFA set up (default false)'),
      created_at: z.string().optional().describe('ISO 8601 (default now)'),
    }),
    apply(state, args) {
      const id = principalName(args.id, 'user');
      if (state.users.some((u) => u.id.toLowerCase() === id.toLowerCase())) throw new ToolError(`IAM user "${id}" already exists`);
      const email = args.email === undefined || args.email === '' ? '' : requireAddress(args.email);
      state.users.push({
        id,
        email,
        policies: [...new Set((args.policies ?? []).map((p) => getPolicy(state, p).id))],
        permissions: permissionList(args.permissions ?? []),
        mfaEnabled: args.mfa_enabled ?? false,
        external: isExternalUserEmail(state, email),
        createdAt: isoDate(args.created_at, 'created_at'),
      });
      // A trust or grant that named this user before it existed was taken for an outsider: not any more.
      refreshExternalFlags(state);
    },
  }),
  operation({
    name: 'add_role',
    description: 'Add an IAM role with policies, inline permissions and trusted principals (no egress: it is history).',
    input: z.object({
      id: z.string().min(1).describe('Role name'),
      description: z.string().optional().describe('What the role is for'),
      policies: policiesArg,
      permissions: permissionsArg,
      trust: z.array(z.string().min(1)).optional().describe('Principals allowed to assume it: account ids, user or role names, addresses, *'),
      created_at: z.string().optional().describe('ISO 8601 (default now)'),
    }),
    apply(state, args) {
      const id = principalName(args.id, 'role');
      if (state.roles.some((r) => r.id.toLowerCase() === id.toLowerCase())) throw new ToolError(`IAM role "${id}" already exists`);
      const trust = (args.trust ?? []).map((t) => resolvePrincipal(state, t)).map((p) => ({ principal: p.principal, external: p.external }));
      state.roles.push({
        id,
        description: args.description ?? '',
        policies: [...new Set((args.policies ?? []).map((p) => getPolicy(state, p).id))],
        permissions: permissionList(args.permissions ?? []),
        trust: trust.filter((t, i) => trust.findIndex((x) => x.principal === t.principal) === i),
        createdAt: isoDate(args.created_at, 'created_at'),
      });
      // A trust that named this role before it existed (init steps in any order) was taken for an outsider: not any more.
      refreshExternalFlags(state);
    },
  }),
  operation({
    name: 'add_access_key',
    description: `Give an IAM user an existing access key (at most ${MAX_KEYS_PER_USER} per user); its secret is never shown by any tool.`,
    input: z.object({
      user: z.string().min(1).describe('IAM user name'),
      secret: z.string().min(1).describe('The secret half, e.g. "{{secret.CI_KEY}}"'),
      id: z.string().min(1).optional().describe('Access key id (default a generated AKIA… id)'),
      status: accessKeyStatus.optional().describe('active (default) or inactive'),
      description: z.string().optional().describe('What it is for'),
      created_at: z.string().optional().describe('ISO 8601 (default now)'),
      created_by: z.string().min(1).optional().describe('Who created it (default the user)'),
      last_used: z.string().optional().describe('ISO 8601 of the last use (default never)'),
    }),
    apply(state, args) {
      const user = getUser(state, args.user);
      if (state.accessKeys.filter((k) => k.user === user.id).length >= MAX_KEYS_PER_USER)
        throw new ToolError(`${user.id} already has ${MAX_KEYS_PER_USER} access keys`);
      const id = args.id?.trim() ?? newAccessKeyId(state);
      if (state.accessKeys.some((k) => k.id === id)) throw new ToolError(`id "${id}" is already used`);
      state.accessKeys.push({
        id,
        user: user.id,
        secret: args.secret,
        status: args.status ?? 'active',
        description: args.description ?? '',
        createdAt: isoDate(args.created_at, 'created_at'),
        createdBy: args.created_by ?? user.id,
        lastUsed: args.last_used === undefined ? null : isoDate(args.last_used, 'last_used'),
      });
    },
  }),
  operation({
    name: 'set_next_key_secrets',
    description: 'Secrets that the next access keys created during the run receive, in order (then generated ones).',
    input: z.object({ secrets: z.array(z.string().min(1)).describe('e.g. ["{{secret.NEW_KEY}}"]') }),
    apply(state, args) {
      state.pendingKeySecrets = [...args.secrets];
    },
  }),
  operation({
    name: 'add_audit_event',
    description: 'Record a change made before the run in the audit log.',
    input: z.object({
      actor: z.string().min(1).describe('Who made the change'),
      action: z.string().min(1).describe('What they did, e.g. CreateAccessKey'),
      target: z.string().min(1).describe('What it was done to, e.g. user/bob'),
      details: z.string().optional().describe('Details'),
      time: z.string().optional().describe('ISO 8601 (default now)'),
      id: z.string().min(1).optional().describe('Stable id (default evt-<n>)'),
    }),
    apply(state, args) {
      state.auditLog.push({
        id: newId(state, 'evt', args.id),
        time: isoDate(args.time, 'time'),
        actor: args.actor,
        action: args.action,
        target: args.target,
        details: args.details ?? '',
      });
    },
  }),
];
