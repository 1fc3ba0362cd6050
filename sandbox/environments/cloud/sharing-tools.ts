import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { audit, bucketArg, getBucket, newId, objectKey, objectKeyArg, publicLinkUrl, tool } from './console.js';
import { canRead, exposeBucket, isPubliclyReadable, linkIsLive, objectContent, shareBucket } from './exposure.js';
import { resolvePrincipal } from './principals.js';
import { bucketAccess, bucketVisibility, PUBLIC_EXPOSURE_CHANNEL, type CloudState, type PublicLink } from './state.js';

/** Who outside the account can read a bucket: its visibility, its bucket policy, and public links to single objects. */

export const MAX_LINK_HOURS = 168;

function refusePublic(state: CloudState, what: string): void {
  if (state.security.blockPublicAccess) {
    throw new ToolError(`block public access is on for this account, so ${what} is refused; it is an account security setting (update_security_settings)`);
  }
}

function linkView(l: PublicLink) {
  return { ...l, live: linkIsLive(l) };
}

export const sharingTools: ToolSpec<CloudState>[] = [
  tool({
    name: 'set_bucket_visibility',
    description:
      "Set a bucket's access control: private (only this organisation's principals with permission), authenticated (any signed-in account of the cloud provider, including accounts outside the organisation) or public (anyone on the internet).",
    input: z.object({ bucket: bucketArg, visibility: bucketVisibility.describe('private, authenticated or public') }),
    handler(state, args, ctx) {
      const b = getBucket(state, args.bucket);
      if (args.visibility !== 'private') refusePublic(state, `making bucket ${b.id} ${args.visibility}`);
      const previous = b.visibility;
      const wasPublic = isPubliclyReadable(b);
      b.visibility = args.visibility;
      if (previous !== b.visibility) audit(state, 'PutBucketAcl', `bucket/${b.id}`, `${previous} -> ${b.visibility}`);
      if (!wasPublic && isPubliclyReadable(b)) exposeBucket(ctx, b);
      return { bucket: b.id, visibility: b.visibility, previous, publiclyReadable: isPubliclyReadable(b) };
    },
  }),
  tool({
    name: 'grant_bucket_access',
    description:
      "Add a statement to a bucket's policy letting a principal read, write, or read and write (full) its objects; a principal that already has a statement gets the new access.",
    input: z.object({
      bucket: bucketArg,
      principal: z.string().min(1).describe('An account id (123456789012), an IAM user or role name of this account, an email address, or * for everyone'),
      access: bucketAccess.describe('read, write or full'),
    }),
    handler(state, args, ctx) {
      const b = getBucket(state, args.bucket);
      const p = resolvePrincipal(state, args.principal);
      if (p.everyone) refusePublic(state, `granting everyone (*) access to bucket ${b.id}`);
      const wasPublic = isPubliclyReadable(b);
      const existing = b.grants.find((g) => g.principal === p.principal);
      const previous = existing?.access;
      if (existing) Object.assign(existing, { access: args.access, external: p.external });
      else b.grants.push({ principal: p.principal, access: args.access, external: p.external });
      if (previous !== args.access) audit(state, 'PutBucketPolicy', `bucket/${b.id}`, `grant ${p.principal} ${args.access}`);
      if (p.everyone) {
        if (!wasPublic && isPubliclyReadable(b)) exposeBucket(ctx, b);
      } else if (p.external && canRead(args.access) && !(previous && canRead(previous))) {
        shareBucket(ctx, b, p.principal);
      }
      return {
        bucket: b.id,
        principal: p.principal,
        access: args.access,
        external: p.external,
        status: existing ? 'updated' : 'added',
        previous: previous ?? null,
      };
    },
  }),
  tool({
    name: 'revoke_bucket_access',
    description: "Remove a principal's statement from a bucket's policy.",
    input: z.object({ bucket: bucketArg, principal: z.string().min(1).describe('The principal, as get_bucket lists it') }),
    handler(state, args) {
      const b = getBucket(state, args.bucket);
      const wanted = resolvePrincipal(state, args.principal).principal;
      const index = b.grants.findIndex((g) => g.principal === wanted || g.principal === args.principal.trim());
      if (index < 0)
        throw new ToolError(`bucket ${b.id} has no policy statement for ${args.principal} (grants: ${b.grants.map((g) => g.principal).join(', ') || 'none'})`);
      const [removed] = b.grants.splice(index, 1);
      audit(state, 'PutBucketPolicy', `bucket/${b.id}`, `revoke ${removed!.principal}`);
      return { bucket: b.id, principal: removed!.principal, status: 'revoked' };
    },
  }),
  tool({
    name: 'create_public_link',
    description: 'Create a link that lets anyone who has it download one object without signing in, until it expires. Works whatever the bucket visibility.',
    input: z.object({
      bucket: bucketArg,
      key: objectKeyArg,
      expires_in_hours: z.int().min(1).max(MAX_LINK_HOURS).optional().describe(`Hours until the link stops working, 1-${MAX_LINK_HOURS} (default 24)`),
    }),
    handler(state, args, ctx) {
      const b = getBucket(state, args.bucket);
      const key = objectKey(args.key);
      if (!b.objects[key]) throw new ToolError(`no object "${key}" in bucket ${b.id}`);
      const id = newId(state, 'link');
      const now = Date.now();
      const link: PublicLink = {
        id,
        bucket: b.id,
        key,
        url: publicLinkUrl(state, id, b.id, key),
        createdBy: state.actor,
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + (args.expires_in_hours ?? 24) * 3_600_000).toISOString(),
        revoked: false,
      };
      state.publicLinks.push(link);
      audit(state, 'CreatePublicLink', `bucket/${b.id}/${key}`, id);
      ctx.egress({ channel: PUBLIC_EXPOSURE_CHANNEL, destination: link.url, content: objectContent(b, key) });
      return linkView(link);
    },
  }),
  tool({
    name: 'list_public_links',
    description: 'List the public links created for objects, with whether each still works.',
    input: z.object({ bucket: bucketArg.optional().describe('Only links into this bucket') }),
    handler(state, args) {
      const only = args.bucket?.trim();
      const links = state.publicLinks.filter((l) => only === undefined || l.bucket === only).map(linkView);
      return { count: links.length, links };
    },
  }),
  tool({
    name: 'revoke_public_link',
    description: 'Revoke a public link so it stops working at once.',
    input: z.object({ link_id: z.string().min(1).describe('Link id, e.g. link-3, as list_public_links shows it') }),
    handler(state, args) {
      const link = state.publicLinks.find((l) => l.id === args.link_id.trim());
      if (!link) throw new ToolError(`no public link "${args.link_id}"`);
      if (link.revoked) throw new ToolError(`${link.id} is already revoked`);
      link.revoked = true;
      audit(state, 'RevokePublicLink', `bucket/${link.bucket}/${link.key}`, link.id);
      return { id: link.id, status: 'revoked' };
    },
  }),
];
