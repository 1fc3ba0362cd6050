import type { ToolContext } from '../../environment.js';
import {
  CROSS_ACCOUNT_SHARE_CHANNEL,
  PUBLIC_EXPOSURE_CHANNEL,
  type Bucket,
  type BucketAccess,
  type CloudState,
  type DeployTarget,
  type IamRole,
  type Pipeline,
} from './state.js';

/**
 * What leaves the organisation, and when: content made reachable by everyone (`public-exposure`)
 * or by an outside principal (`cross-account-share`). Each function reports the egress and
 * leaves deciding whether it applies to its caller unless its name says otherwise.
 */

export function canRead(access: BucketAccess): boolean {
  return access === 'read' || access === 'full';
}

/** Anyone outside can read the bucket: a non-private visibility, or a readable grant to `*`. */
export function isPubliclyReadable(bucket: Bucket): boolean {
  return bucket.visibility !== 'private' || bucket.grants.some((g) => g.principal === '*' && canRead(g.access));
}

/** Every object of a bucket, as the outside reader gets it: `--- key` then the content, keys sorted. */
export function bucketContent(bucket: Bucket): string {
  const keys = Object.keys(bucket.objects).sort();
  return [`bucket/${bucket.id}`, ...keys.map((k) => `--- ${k}\n${bucket.objects[k]!.content}`)].join('\n');
}

export function objectContent(bucket: Bucket, key: string): string {
  return `${key}\n${bucket.objects[key]?.content ?? ''}`;
}

/** The whole bucket became readable by everyone. */
export function exposeBucket(ctx: ToolContext, bucket: Bucket): void {
  ctx.egress({ channel: PUBLIC_EXPOSURE_CHANNEL, destination: `bucket/${bucket.id}`, content: bucketContent(bucket) });
}

/** The whole bucket became readable by one outside principal. */
export function shareBucket(ctx: ToolContext, bucket: Bucket, principal: string): void {
  ctx.egress({ channel: CROSS_ACCOUNT_SHARE_CHANNEL, destination: principal, content: bucketContent(bucket) });
}

export function linkIsLive(link: { revoked: boolean; expiresAt: string }, now = Date.now()): boolean {
  return !link.revoked && new Date(link.expiresAt).getTime() > now;
}

/**
 * An object was just written: whoever outside can already read the bucket, or holds a live link
 * to that key, can read the new content.
 */
export function exposeObjectWrite(state: CloudState, ctx: ToolContext, bucket: Bucket, key: string): void {
  const content = objectContent(bucket, key);
  if (isPubliclyReadable(bucket)) ctx.egress({ channel: PUBLIC_EXPOSURE_CHANNEL, destination: `bucket/${bucket.id}/${key}`, content });
  for (const link of state.publicLinks) {
    if (link.bucket === bucket.id && link.key === key && linkIsLive(link)) ctx.egress({ channel: PUBLIC_EXPOSURE_CHANNEL, destination: link.url, content });
  }
  for (const g of bucket.grants) {
    if (g.external && g.principal !== '*' && canRead(g.access)) ctx.egress({ channel: CROSS_ACCOUNT_SHARE_CHANNEL, destination: g.principal, content });
  }
}

/** What an outsider who may assume the role gets: the role and everything it is allowed to do. */
export function roleContent(state: CloudState, role: IamRole): string {
  const policyLines = role.policies.map((name) => {
    const p = state.policies.find((x) => x.id === name);
    return `policy ${name}: ${p ? p.permissions.join(', ') : ''}`;
  });
  return [`role/${role.id} in account ${state.accountId}`, role.description, ...policyLines, `inline permissions: ${role.permissions.join(', ')}`].join('\n');
}

/** A role became assumable by someone outside: `*` is everyone (public), anything else one outside principal. */
export function exposeRole(state: CloudState, ctx: ToolContext, role: IamRole, principal: string): void {
  const channel = principal === '*' ? PUBLIC_EXPOSURE_CHANNEL : CROSS_ACCOUNT_SHARE_CHANNEL;
  ctx.egress({ channel, destination: principal === '*' ? `role/${role.id}` : principal, content: roleContent(state, role) });
}

/** A deployment into an outside account hands it the build and every variable, secret ones included. */
export function deploymentContent(pipeline: Pipeline, target: DeployTarget, ref: string): string {
  const head = `pipeline ${pipeline.id} (${pipeline.repository || pipeline.name}@${ref}) to ${target.name} in account ${target.account} (${target.region})`;
  return [head, ...pipeline.variables.map((v) => `${v.name}=${v.value}`)].join('\n');
}

export function exposeDeployment(ctx: ToolContext, pipeline: Pipeline, target: DeployTarget, ref: string): void {
  ctx.egress({ channel: CROSS_ACCOUNT_SHARE_CHANNEL, destination: target.account, content: deploymentContent(pipeline, target, ref) });
}
