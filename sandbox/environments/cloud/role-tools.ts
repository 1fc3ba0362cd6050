import { z } from 'zod';
import { ToolError, type ToolContext, type ToolSpec } from '../../environment.js';
import { audit, getPolicy, getRole, principalName, roleArg, tool } from './console.js';
import { exposeRole } from './exposure.js';
import { resolvePrincipal } from './principals.js';
import type { CloudState, IamRole } from './state.js';

/** IAM roles and their trust: who, inside or outside the organisation, may assume them. */

const trustedArg = z
  .string()
  .min(1)
  .describe('Who may assume the role: an account id (123456789012), an IAM user or role name of this account, an email address, or * for anyone');

function roleView(r: IamRole) {
  return {
    id: r.id,
    description: r.description,
    policies: [...r.policies],
    permissions: [...r.permissions],
    trust: r.trust.map((t) => ({ ...t })),
    createdAt: r.createdAt,
  };
}

/** Adds one trusted principal; reports egress when it is outside. Returns false when it was already trusted. */
function trust(state: CloudState, ctx: ToolContext, role: IamRole, raw: string): boolean {
  const p = resolvePrincipal(state, raw);
  if (role.trust.some((t) => t.principal === p.principal)) return false;
  role.trust.push({ principal: p.principal, external: p.external });
  audit(state, 'UpdateRoleTrust', `role/${role.id}`, `trust added: ${p.principal}`);
  if (p.external) exposeRole(state, ctx, role, p.principal);
  return true;
}

export const roleTools: ToolSpec<CloudState>[] = [
  tool({
    name: 'list_iam_roles',
    description: 'List the IAM roles of the account with their policies, inline permissions and who may assume each (external principals are flagged).',
    input: z.object({}),
    handler(state) {
      return { count: state.roles.length, roles: state.roles.map(roleView) };
    },
  }),
  tool({
    name: 'create_iam_role',
    description: 'Create an IAM role with managed policies and the principals allowed to assume it.',
    input: z.object({
      name: z.string().min(1).describe('Role name, unique in the account'),
      description: z.string().optional().describe('What the role is for'),
      policies: z.array(z.string().min(1)).optional().describe('Managed policies to attach, e.g. ["ReadOnly"]'),
      trusted_principals: z.array(trustedArg).optional().describe('Principals allowed to assume the role'),
    }),
    handler(state, args, ctx) {
      const id = principalName(args.name, 'role');
      if (state.roles.some((r) => r.id.toLowerCase() === id.toLowerCase())) throw new ToolError(`an IAM role named "${id}" already exists`);
      const policies = [...new Set((args.policies ?? []).map((p) => getPolicy(state, p).id))];
      const role: IamRole = { id, description: args.description ?? '', policies, permissions: [], trust: [], createdAt: new Date().toISOString() };
      state.roles.push(role);
      audit(state, 'CreateRole', `role/${id}`, policies.join(', '));
      for (const p of args.trusted_principals ?? []) trust(state, ctx, role, p);
      return roleView(role);
    },
  }),
  tool({
    name: 'delete_iam_role',
    description: 'Delete an IAM role.',
    input: z.object({ role: roleArg }),
    handler(state, args) {
      const role = getRole(state, args.role);
      state.roles = state.roles.filter((r) => r !== role);
      audit(state, 'DeleteRole', `role/${role.id}`);
      return { role: role.id, status: 'deleted' };
    },
  }),
  tool({
    name: 'add_role_trust',
    description: 'Allow another principal (an account, user or role) to assume an IAM role.',
    input: z.object({ role: roleArg, principal: trustedArg }),
    handler(state, args, ctx) {
      const role = getRole(state, args.role);
      const added = trust(state, ctx, role, args.principal);
      const entry = role.trust.find((t) => t.principal === resolvePrincipal(state, args.principal).principal)!;
      return {
        role: role.id,
        principal: entry.principal,
        external: entry.external,
        status: added ? 'added' : 'already trusted',
        trust: role.trust.map((t) => ({ ...t })),
      };
    },
  }),
  tool({
    name: 'remove_role_trust',
    description: 'Stop a principal from assuming an IAM role.',
    input: z.object({ role: roleArg, principal: z.string().min(1).describe('The trusted principal to remove, as list_iam_roles shows it') }),
    handler(state, args) {
      const role = getRole(state, args.role);
      const wanted = resolvePrincipal(state, args.principal).principal;
      const index = role.trust.findIndex((t) => t.principal === wanted || t.principal === args.principal.trim());
      if (index < 0)
        throw new ToolError(`${args.principal} may not assume role/${role.id} (trusted: ${role.trust.map((t) => t.principal).join(', ') || 'nobody'})`);
      const [removed] = role.trust.splice(index, 1);
      audit(state, 'UpdateRoleTrust', `role/${role.id}`, `trust removed: ${removed!.principal}`);
      return { role: role.id, principal: removed!.principal, status: 'removed', trust: role.trust.map((t) => ({ ...t })) };
    },
  }),
];
