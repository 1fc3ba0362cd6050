import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { audit, getPolicy, getPrincipal, getUser, keyView, permissionList, principalName, principalTypeArg, tool, userArg } from './console.js';
import { requireAddress } from '../shared/domains.js';
import { isExternalUserEmail } from './principals.js';
import type { CloudState, IamRole, IamUser } from './state.js';

/** IAM users, the managed policies, and what users and roles are allowed to do. */

function userView(state: CloudState, u: IamUser) {
  const keys = state.accessKeys.filter((k) => k.user === u.id);
  return {
    id: u.id,
    email: u.email,
    external: u.external,
    policies: [...u.policies],
    permissions: [...u.permissions],
    mfaEnabled: u.mfaEnabled,
    createdAt: u.createdAt,
    accessKeys: keys.length,
    activeAccessKeys: keys.filter((k) => k.status === 'active').length,
  };
}

function target(type: 'user' | 'role', p: IamUser | IamRole): string {
  return `${type}/${p.id}`;
}

export const userTools: ToolSpec<CloudState>[] = [
  tool({
    name: 'list_iam_users',
    description: 'List the IAM users of the account with their attached policies, inline permissions, MFA status and access key counts.',
    input: z.object({}),
    handler(state) {
      return { count: state.users.length, users: state.users.map((u) => userView(state, u)) };
    },
  }),
  tool({
    name: 'get_iam_user',
    description: 'Show one IAM user with their policies, permissions and access keys (key secrets are never shown).',
    input: z.object({ user: userArg }),
    handler(state, args) {
      const u = getUser(state, args.user);
      return { ...userView(state, u), keys: state.accessKeys.filter((k) => k.user === u.id).map(keyView) };
    },
  }),
  tool({
    name: 'create_iam_user',
    description: 'Create an IAM user, optionally with an email address and managed policies attached.',
    input: z.object({
      name: z.string().min(1).describe('User name, unique in the account (letters, digits, + = , . @ _ -)'),
      email: z.string().min(1).optional().describe("The person's email address"),
      policies: z.array(z.string().min(1)).optional().describe('Managed policies to attach, e.g. ["ReadOnly"]'),
    }),
    handler(state, args) {
      const id = principalName(args.name, 'user');
      if (state.users.some((u) => u.id.toLowerCase() === id.toLowerCase())) throw new ToolError(`an IAM user named "${id}" already exists`);
      const email = args.email === undefined ? '' : requireAddress(args.email);
      const policies = [...new Set((args.policies ?? []).map((p) => getPolicy(state, p).id))];
      const user: IamUser = {
        id,
        email,
        policies,
        permissions: [],
        mfaEnabled: false,
        external: isExternalUserEmail(state, email),
        createdAt: new Date().toISOString(),
      };
      state.users.push(user);
      audit(state, 'CreateUser', `user/${id}`, email);
      for (const p of policies) audit(state, 'AttachPolicy', `user/${id}`, p);
      return userView(state, user);
    },
  }),
  tool({
    name: 'delete_iam_user',
    description: 'Delete an IAM user together with their access keys.',
    input: z.object({ user: userArg }),
    handler(state, args) {
      const u = getUser(state, args.user);
      if (u.id === state.actor) throw new ToolError(`you cannot delete ${u.id}: it is the user you are signed in as`);
      const keys = state.accessKeys.filter((k) => k.user === u.id).map((k) => k.id);
      state.accessKeys = state.accessKeys.filter((k) => k.user !== u.id);
      state.users = state.users.filter((x) => x !== u);
      audit(state, 'DeleteUser', `user/${u.id}`, keys.length ? `access keys deleted: ${keys.join(', ')}` : '');
      return { user: u.id, status: 'deleted', deletedAccessKeys: keys };
    },
  }),
  tool({
    name: 'list_iam_policies',
    description: 'List the managed policies of the account, what each allows, and which users and roles have it attached.',
    input: z.object({}),
    handler(state) {
      return {
        count: state.policies.length,
        policies: state.policies.map((p) => ({
          id: p.id,
          description: p.description,
          permissions: [...p.permissions],
          attachedTo: [
            ...state.users.filter((u) => u.policies.includes(p.id)).map((u) => `user/${u.id}`),
            ...state.roles.filter((r) => r.policies.includes(p.id)).map((r) => `role/${r.id}`),
          ],
        })),
      };
    },
  }),
  tool({
    name: 'attach_iam_policy',
    description: 'Attach a managed policy (e.g. ReadOnly, PowerUser, Admin) to an IAM user or role.',
    input: z.object({
      principal_type: principalTypeArg,
      principal: z.string().min(1).describe('Name of the user or role'),
      policy: z.string().min(1).describe('Managed policy name, as listed by list_iam_policies'),
    }),
    handler(state, args) {
      const p = getPrincipal(state, args.principal_type, args.principal);
      const policy = getPolicy(state, args.policy);
      if (p.policies.includes(policy.id))
        return { principal: target(args.principal_type, p), policy: policy.id, status: 'already attached', policies: [...p.policies] };
      p.policies.push(policy.id);
      audit(state, 'AttachPolicy', target(args.principal_type, p), policy.id);
      return { principal: target(args.principal_type, p), policy: policy.id, status: 'attached', policies: [...p.policies] };
    },
  }),
  tool({
    name: 'detach_iam_policy',
    description: 'Detach a managed policy from an IAM user or role.',
    input: z.object({
      principal_type: principalTypeArg,
      principal: z.string().min(1).describe('Name of the user or role'),
      policy: z.string().min(1).describe('Managed policy name'),
    }),
    handler(state, args) {
      const p = getPrincipal(state, args.principal_type, args.principal);
      const index = p.policies.findIndex((x) => x.toLowerCase() === args.policy.trim().toLowerCase());
      if (index < 0)
        throw new ToolError(
          `${target(args.principal_type, p)} does not have the policy "${args.policy}" attached (attached: ${p.policies.join(', ') || 'none'})`,
        );
      const [removed] = p.policies.splice(index, 1);
      audit(state, 'DetachPolicy', target(args.principal_type, p), removed!);
      return { principal: target(args.principal_type, p), policy: removed, status: 'detached', policies: [...p.policies] };
    },
  }),
  tool({
    name: 'set_inline_permissions',
    description: 'Replace the inline permissions of an IAM user or role (service:Action entries such as storage:GetObject; an empty list removes them all).',
    input: z.object({
      principal_type: principalTypeArg,
      principal: z.string().min(1).describe('Name of the user or role'),
      permissions: z.array(z.string()).describe('The complete new list, e.g. ["storage:GetObject", "storage:ListBucket"]; "*" allows everything'),
    }),
    handler(state, args) {
      const p = getPrincipal(state, args.principal_type, args.principal);
      const next = permissionList(args.permissions);
      const previous = [...p.permissions];
      p.permissions = next;
      audit(state, 'PutInlinePermissions', target(args.principal_type, p), next.join(', '));
      return { principal: target(args.principal_type, p), permissions: [...next], previous };
    },
  }),
];
