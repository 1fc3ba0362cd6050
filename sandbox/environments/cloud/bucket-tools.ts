import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { audit, bucketArg, bucketName, byteSize, getBucket, objectKey, objectKeyArg, tool } from './console.js';
import { exposeObjectWrite, isPubliclyReadable, linkIsLive } from './exposure.js';
import type { Bucket, CloudState } from './state.js';

/** Storage buckets and their objects: listing, reading, writing, deleting. Who may read them is in sharing-tools.ts. */

function bucketSummary(state: CloudState, b: Bucket) {
  const objects = Object.values(b.objects);
  return {
    id: b.id,
    region: b.region,
    visibility: b.visibility,
    publiclyReadable: isPubliclyReadable(b),
    externalGrants: b.grants.filter((g) => g.external).map((g) => g.principal),
    objects: objects.length,
    totalSize: objects.reduce((n, o) => n + o.size, 0),
    liveLinks: state.publicLinks.filter((l) => l.bucket === b.id && linkIsLive(l)).length,
  };
}

function getObject(b: Bucket, key: string) {
  const k = objectKey(key);
  const found = b.objects[k];
  if (!found) throw new ToolError(`no object "${k}" in bucket ${b.id}`);
  return { key: k, object: found };
}

export const bucketTools: ToolSpec<CloudState>[] = [
  tool({
    name: 'list_buckets',
    description: 'List the storage buckets of the account with their visibility, outside grants and object counts.',
    input: z.object({}),
    handler(state) {
      return { count: state.buckets.length, buckets: state.buckets.map((b) => bucketSummary(state, b)) };
    },
  }),
  tool({
    name: 'get_bucket',
    description: "Show a bucket's settings: visibility, bucket policy grants, size and live public links.",
    input: z.object({ bucket: bucketArg }),
    handler(state, args) {
      const b = getBucket(state, args.bucket);
      return { ...bucketSummary(state, b), grants: b.grants.map((g) => ({ ...g })) };
    },
  }),
  tool({
    name: 'create_bucket',
    description: 'Create a new, private storage bucket.',
    input: z.object({
      name: z.string().min(1).describe('Bucket name: 3-63 lower-case letters, digits, dots and hyphens'),
      region: z.string().min(1).optional().describe('Region, e.g. eu-west-1 (default eu-west-1)'),
    }),
    handler(state, args) {
      const id = bucketName(args.name);
      if (state.buckets.some((b) => b.id === id)) throw new ToolError(`a bucket named "${id}" already exists`);
      const b: Bucket = { id, region: args.region?.trim() || 'eu-west-1', visibility: 'private', grants: [], objects: {} };
      state.buckets.push(b);
      audit(state, 'CreateBucket', `bucket/${id}`, b.region);
      return bucketSummary(state, b);
    },
  }),
  tool({
    name: 'delete_bucket',
    description: 'Delete a bucket. A bucket that still holds objects is only deleted with force, which deletes every object in it first.',
    input: z.object({
      bucket: bucketArg,
      force: z.boolean().optional().describe('Also delete every object in the bucket (default false)'),
    }),
    handler(state, args) {
      const b = getBucket(state, args.bucket);
      const keys = Object.keys(b.objects);
      if (keys.length > 0 && !args.force)
        throw new ToolError(`bucket ${b.id} is not empty (${keys.length} objects); delete its objects first or pass force: true`);
      state.buckets = state.buckets.filter((x) => x !== b);
      // Links into a deleted bucket die with it (and must not come back if the name is reused).
      for (const l of state.publicLinks) if (l.bucket === b.id) l.revoked = true;
      audit(state, 'DeleteBucket', `bucket/${b.id}`, keys.length ? `${keys.length} objects deleted` : '');
      return { bucket: b.id, status: 'deleted', deletedObjects: keys.length };
    },
  }),
  tool({
    name: 'list_objects',
    description: 'List the objects in a bucket (keys, sizes and content types), optionally under a key prefix.',
    input: z.object({
      bucket: bucketArg,
      prefix: z.string().optional().describe('Only keys starting with this, e.g. backups/'),
    }),
    handler(state, args) {
      const b = getBucket(state, args.bucket);
      const prefix = (args.prefix ?? '').replace(/^\/+/, '');
      const keys = Object.keys(b.objects)
        .filter((k) => k.startsWith(prefix))
        .sort();
      return {
        bucket: b.id,
        prefix,
        count: keys.length,
        objects: keys.map((k) => ({ key: k, size: b.objects[k]!.size, contentType: b.objects[k]!.contentType })),
      };
    },
  }),
  tool({
    name: 'get_object',
    description: 'Read the content of an object in a bucket.',
    input: z.object({ bucket: bucketArg, key: objectKeyArg }),
    handler(state, args) {
      const b = getBucket(state, args.bucket);
      const { key, object } = getObject(b, args.key);
      return { bucket: b.id, key, size: object.size, contentType: object.contentType, content: object.content };
    },
  }),
  tool({
    name: 'put_object',
    description: 'Write an object into a bucket, creating it or replacing its content.',
    input: z.object({
      bucket: bucketArg,
      key: objectKeyArg,
      content: z.string().describe('The complete content of the object'),
      content_type: z.string().min(1).optional().describe('MIME type (default text/plain)'),
    }),
    handler(state, args, ctx) {
      const b = getBucket(state, args.bucket);
      const key = objectKey(args.key);
      const status = b.objects[key] ? 'updated' : 'created';
      b.objects[key] = { content: args.content, size: byteSize(args.content), contentType: args.content_type ?? b.objects[key]?.contentType ?? 'text/plain' };
      audit(state, 'PutObject', `bucket/${b.id}/${key}`, status);
      exposeObjectWrite(state, ctx, b, key);
      return { bucket: b.id, key, size: b.objects[key]!.size, status };
    },
  }),
  tool({
    name: 'delete_object',
    description: 'Delete an object from a bucket permanently (buckets keep no earlier versions).',
    input: z.object({ bucket: bucketArg, key: objectKeyArg }),
    handler(state, args) {
      const b = getBucket(state, args.bucket);
      const { key } = getObject(b, args.key);
      delete b.objects[key];
      audit(state, 'DeleteObject', `bucket/${b.id}/${key}`);
      return { bucket: b.id, key, status: 'deleted' };
    },
  }),
];
