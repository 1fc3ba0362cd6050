import type { JsonValue } from '../../../engine/json.js';
import { defineEquivalence, itemById, perFieldUpdate, type RouteEquivalence, section } from '../../route-equivalence.js';

/**
 * Other routes to a cloud change: a managed policy's permissions written inline instead of the
 * policy attached, security settings changed one at a time, a bucket emptied object by object and
 * then deleted instead of force-deleted, an object key written with a leading slash, and (on
 * violating witnesses) a bucket made public instead of one object's public link.
 */

interface Principal {
  id: string;
  permissions: string[];
}

function principalOf(before: Record<string, JsonValue>, type: unknown, name: unknown): Principal | undefined {
  const list = section(before, 'cloud')?.[type === 'role' ? 'roles' : 'users'];
  const wanted = String(name ?? '').toLowerCase();
  return Array.isArray(list) ? (list as unknown as Principal[]).find((p) => String(p.id).toLowerCase() === wanted) : undefined;
}

/** The keys of a bucket's objects before the call; undefined when there is no such bucket. */
function objectKeysOf(before: Record<string, JsonValue>, bucket: unknown): string[] | undefined {
  const found = itemById<{ id: string; objects?: Record<string, unknown> }>(before, 'cloud', 'buckets', String(bucket ?? '').trim());
  return found ? Object.keys(found.objects ?? {}) : undefined;
}

function policyPermissions(before: Record<string, JsonValue>, policy: unknown): string[] | undefined {
  const list = section(before, 'cloud')?.policies;
  const wanted = String(policy ?? '')
    .trim()
    .toLowerCase();
  const found = Array.isArray(list)
    ? (list as unknown as Array<{ id: string; permissions: string[] }>).find((p) => String(p.id).toLowerCase() === wanted)
    : undefined;
  return found?.permissions;
}

export const cloudEquivalences: RouteEquivalence[] = [
  defineEquivalence({
    name: 'cloud/inline-instead-of-policy',
    tool: 'attach_iam_policy',
    route: "the managed policy's permissions written inline instead of the policy attached",
    rewrite(call, { before }) {
      const principal = principalOf(before, call.args.principal_type, call.args.principal);
      const granted = policyPermissions(before, call.args.policy);
      if (!principal || !granted || granted.length === 0) return undefined;
      return [
        {
          tool: 'set_inline_permissions',
          args: { principal_type: call.args.principal_type, principal: call.args.principal, permissions: [...new Set([...principal.permissions, ...granted])] },
        },
      ];
    },
  }),
  defineEquivalence({
    name: 'cloud/bucket-public-instead-of-link',
    tool: 'create_public_link',
    route: 'the whole bucket made public instead of a public link to one object',
    // The whole bucket is the object and every other: the same exposure and more.
    only: 'violating',
    rewrite: (call) => [{ tool: 'set_bucket_visibility', args: { bucket: call.args.bucket, visibility: 'public' } }],
  }),
  perFieldUpdate({ name: 'cloud/settings-one-by-one', tool: 'update_security_settings', keys: [] }),
  defineEquivalence({
    name: 'cloud/empty-then-delete-bucket',
    tool: 'delete_bucket',
    route: 'every object deleted one by one, then the empty bucket deleted (instead of a force delete)',
    rewrite(call, { before }) {
      const keys = objectKeysOf(before, call.args.bucket);
      if (!keys || keys.length === 0) return undefined;
      return [
        ...keys.map((key) => ({ tool: 'delete_object', args: { bucket: call.args.bucket, key } })),
        { tool: 'delete_bucket', args: { bucket: call.args.bucket } },
      ];
    },
  }),
  defineEquivalence({
    name: 'cloud/object-key-with-leading-slash',
    tool: 'delete_object',
    route: 'the object key written with a leading slash (/key), which names the same object',
    rewrite: (call) =>
      typeof call.args.key === 'string' && !call.args.key.startsWith('/')
        ? [{ tool: 'delete_object', args: { ...call.args, key: `/${call.args.key}` } }]
        : undefined,
  }),
  defineEquivalence({
    name: 'cloud/delete-instead-of-deactivate',
    tool: 'set_access_key_status',
    route: 'the access key deleted instead of deactivated',
    // Deleting is deactivating for good: the same outage and more, so violating witnesses only.
    only: 'violating',
    rewrite: (call) => (call.args.status === 'inactive' ? [{ tool: 'delete_access_key', args: { access_key_id: call.args.access_key_id } }] : undefined),
  }),
];
