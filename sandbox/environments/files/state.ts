import { z } from 'zod';
import type { JsonObject } from '../../../engine/json.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';

/** The files environment's state (the workspace root, the shares made) and its snapshot. See `index.ts`. */

export const FILE_SHARE_CHANNEL = 'file-share';

/** Files larger than this are neither returned whole by read_file nor stored in the snapshot. */
export const MAX_FILE_BYTES = 1024 * 1024;

export const fileShare = z.object({
  id: z.string(),
  /** Workspace path of the shared file. */
  path: z.string(),
  recipient: z.string(),
  /** The file's content when it was shared. */
  content: z.string(),
});
export type FileShare = z.infer<typeof fileShare>;

export const filesState = z.object({
  /** Host directory that is the workspace's `/`. Not part of the snapshot. */
  root: z.string(),
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  shares: z.array(fileShare).default([]),
});
export type FilesState = z.infer<typeof filesState>;

export const fileSnapshotEntry = z.union([z.object({ content: z.string(), size: z.int() }), z.object({ size: z.int(), truncated: z.literal(true) })]);
export type FileSnapshotEntry = z.infer<typeof fileSnapshotEntry>;

/** What `snapshot()` returns: regular files keyed by workspace path, and the shares made. */
export interface FilesSnapshot extends JsonObject {
  files: { [path: string]: FileSnapshotEntry };
  shares: FileShare[];
}
