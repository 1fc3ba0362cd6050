import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ToolError } from '../../environment.js';
import { claimId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import type { AccessKey, Bucket, CloudState, DeployTarget, IamRole, IamUser, ManagedPolicy, Pipeline } from './state.js';

/** Lookups and rules the console's tools and operations share: ids, finding resources, the audit log. */

export const { tool, operation } = specBuilders<CloudState>();

export const userArg = z.string().min(1).describe('IAM user name, e.g. bob');
export const roleArg = z.string().min(1).describe('IAM role name, e.g. deploy-role');
export const bucketArg = z.string().min(1).describe('Bucket name, e.g. acme-backups');
export const objectKeyArg = z.string().min(1).describe('Object key (its path in the bucket), e.g. reports/2024-q2.csv');
export const pipelineArg = z.string().min(1).describe('Pipeline id, as listed by list_pipelines');
export const principalTypeArg = z.enum(['user', 'role']).describe('Whether the principal is an IAM user or an IAM role');

/** Ids of runs, audit events and public links: one sequence, clear of every seeded id. */
function serialIds(state: CloudState): Set<string> {
  return new Set([...state.runs, ...state.auditLog, ...state.publicLinks].map((x) => x.id));
}

export function newId(state: CloudState, prefix: string, explicit?: string): string {
  return claimId(state, prefix, serialIds(state), explicit);
}

/** Deterministic, realistic-looking text derived from `seed` (so snapshots of a run are reproducible). */
export function digest(seed: string, length: number, alphabet: string): string {
  const bytes = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; out.length < length; i++) out += alphabet[bytes[i % bytes.length]! % alphabet.length]!;
  return out;
}

/** A user may hold at most this many access keys, active or not (as on real clouds). */
export const MAX_KEYS_PER_USER = 2;

const KEY_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** A fresh `AKIA…` id that no key has. */
export function newAccessKeyId(state: CloudState): string {
  const taken = new Set(state.accessKeys.map((k) => k.id));
  let id: string;
  do id = `AKIA${digest(`${state.accountId}:key:${state.nextId++}`, 16, KEY_ID_ALPHABET)}`;
  while (taken.has(id));
  return id;
}

/** The secret of a key about to be created: the next seeded one (a case's canary) or a derived one. */
export function newAccessKeySecret(state: CloudState, keyId: string): string {
  return state.pendingKeySecrets.shift() ?? digest(`${state.accountId}:secret:${keyId}`, 40, SECRET_ALPHABET);
}

function names(items: ReadonlyArray<{ id: string }>): string {
  return items.map((x) => x.id).join(', ') || 'none';
}

export function getUser(state: CloudState, name: string): IamUser {
  const n = name.trim().replace(/^user\//, '');
  const user = state.users.find((u) => u.id === n) ?? state.users.find((u) => u.id.toLowerCase() === n.toLowerCase());
  if (!user) throw new ToolError(`no IAM user "${name}" (users: ${names(state.users)})`);
  return user;
}

export function getRole(state: CloudState, name: string): IamRole {
  const n = name.trim().replace(/^role\//, '');
  const role = state.roles.find((r) => r.id === n) ?? state.roles.find((r) => r.id.toLowerCase() === n.toLowerCase());
  if (!role) throw new ToolError(`no IAM role "${name}" (roles: ${names(state.roles)})`);
  return role;
}

export function getPrincipal(state: CloudState, type: 'user' | 'role', name: string): IamUser | IamRole {
  return type === 'user' ? getUser(state, name) : getRole(state, name);
}

export function getPolicy(state: CloudState, name: string): ManagedPolicy {
  const n = name.trim();
  const policy = state.policies.find((p) => p.id === n) ?? state.policies.find((p) => p.id.toLowerCase() === n.toLowerCase());
  if (!policy) throw new ToolError(`no managed policy "${name}" (policies: ${names(state.policies)})`);
  return policy;
}

export function getAccessKey(state: CloudState, id: string): AccessKey {
  const key = state.accessKeys.find((k) => k.id === id.trim());
  if (!key) throw new ToolError(`no access key "${id}" (use list_access_keys)`);
  return key;
}

export function getBucket(state: CloudState, name: string): Bucket {
  const n = name
    .trim()
    .replace(/^bucket\//, '')
    .replace(/\/+$/, '');
  const found = state.buckets.find((b) => b.id === n);
  if (!found) throw new ToolError(`no bucket "${name}" (buckets: ${names(state.buckets)})`);
  return found;
}

export function getPipeline(state: CloudState, id: string): Pipeline {
  const n = id.trim();
  const found = state.pipelines.find((p) => p.id === n) ?? state.pipelines.find((p) => p.name.toLowerCase() === n.toLowerCase());
  if (!found) throw new ToolError(`no pipeline "${id}" (pipelines: ${names(state.pipelines)})`);
  return found;
}

export function getTarget(pipeline: Pipeline, name: string): DeployTarget {
  const n = name.trim().toLowerCase();
  const target = pipeline.environments.find((e) => e.name.toLowerCase() === n);
  if (!target)
    throw new ToolError(
      `pipeline ${pipeline.id} has no environment "${name}" (environments: ${pipeline.environments.map((e) => e.name).join(', ') || 'none'})`,
    );
  return target;
}

/** The URL of public link `id` to an object: stable for a given account, link and object. */
export function publicLinkUrl(state: CloudState, id: string, bucket: string, key: string): string {
  const signature = digest(`${state.accountId}:${id}:${bucket}/${key}`, 32, 'abcdefghijklmnopqrstuvwxyz0123456789');
  return `https://storage.cloud.example/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}?link=${id}&signature=${signature}`;
}

/** An object key as stored: no leading slash. */
export function objectKey(key: string): string {
  const k = key.trim().replace(/^\/+/, '');
  if (!k) throw new ToolError('an object key is required');
  return k;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function bucketName(name: string): string {
  const n = name.trim();
  if (!BUCKET_NAME.test(n) || n.includes('..')) {
    throw new ToolError(`invalid bucket name ${JSON.stringify(name)}: use 3-63 lower-case letters, digits, dots and hyphens`);
  }
  return n;
}

const PRINCIPAL_NAME = /^[A-Za-z0-9+=,.@_-]{1,64}$/;

export function principalName(name: string, what: string): string {
  const n = name.trim();
  if (!PRINCIPAL_NAME.test(n)) throw new ToolError(`invalid ${what} name ${JSON.stringify(name)}: use letters, digits and + = , . @ _ -`);
  return n;
}

const PERMISSION = /^(\*|[a-z*][a-z0-9-]*:[A-Za-z0-9*]+)$/;

/** Inline permissions, checked and de-duplicated in order. */
export function permissionList(permissions: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of permissions) {
    const p = raw.trim();
    if (!PERMISSION.test(p)) throw new ToolError(`not a permission: ${JSON.stringify(raw)} (use service:Action, e.g. storage:GetObject, or *)`);
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

export function byteSize(content: string): number {
  return Buffer.byteLength(content, 'utf8');
}

/** An access key as tools show it: never the secret. */
export function keyView(k: AccessKey) {
  return { id: k.id, user: k.user, status: k.status, description: k.description, createdAt: k.createdAt, createdBy: k.createdBy, lastUsed: k.lastUsed };
}

/**
 * Appends a change to the audit log, as the account records it: nothing is recorded while audit
 * logging is off (which is why switching it off matters).
 */
export function audit(state: CloudState, action: string, target: string, details = ''): void {
  if (!state.security.auditLogging) return;
  state.auditLog.push({ id: newId(state, 'evt'), time: new Date().toISOString(), actor: state.actor, action, target, details });
}
