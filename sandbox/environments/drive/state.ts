import { z } from 'zod';
import { DEFAULT_DOMAINS } from '../shared/domains.js';

/** The documents drive's state: folders, documents with their versions and comments, sharing, the activity log. See `index.ts`. */

/** A document (or a folder's documents) shared with a person outside the organisation. */
export const DRIVE_SHARE_CHANNEL = 'drive-share';
/** A document readable by anyone who has its link. */
export const PUBLIC_LINK_CHANNEL = 'public-link';

/** Access levels, weakest first. `owner` is never granted: it moves with transfer_drive_ownership. */
export const accessRole = z.enum(['viewer', 'commenter', 'editor', 'owner']);
export type AccessRole = z.infer<typeof accessRole>;
export const grantableRole = z.enum(['viewer', 'commenter', 'editor']);
export type GrantableRole = z.infer<typeof grantableRole>;

export const linkAudience = z.enum(['off', 'organisation', 'anyone']);
export type LinkAudience = z.infer<typeof linkAudience>;
export const documentType = z.enum(['document', 'spreadsheet']);
export type DocumentType = z.infer<typeof documentType>;

export const permission = z.object({
  /** Lower-cased email address. */
  principal: z.string(),
  role: grantableRole,
});
export type Permission = z.infer<typeof permission>;

export const linkSharing = z.object({
  audience: linkAudience.default('off'),
  role: grantableRole.default('viewer'),
  /** ISO 8601; after it the link no longer opens anything. `null`: no expiry. */
  expires: z.string().nullable().default(null),
});
export type LinkSharing = z.infer<typeof linkSharing>;

export const cellRows = z.array(z.array(z.string()));

export const documentVersion = z.object({
  /** `v<number>`, unique within the document. */
  id: z.string(),
  /** 1, 2, …; never reused, also after a version is deleted. The last version is the current content. */
  number: z.int().min(1),
  time: z.string(),
  author: z.string(),
  /** The document's text at this version (for spreadsheets: its rows as CSV). */
  content: z.string(),
  rows: cellRows.optional(),
});
export type DocumentVersion = z.infer<typeof documentVersion>;

export const documentComment = z.object({
  id: z.string(),
  author: z.string(),
  body: z.string(),
  time: z.string(),
  /** The passage of the document the comment is attached to ('' when none). */
  quote: z.string().default(''),
  resolved: z.boolean().default(false),
});
export type DocumentComment = z.infer<typeof documentComment>;

/** What folders and documents have in common: ownership, sharing and trash. */
const itemFields = {
  id: z.string(),
  owner: z.string(),
  createdTime: z.string(),
  permissions: z.array(permission).default([]),
  link: linkSharing.default({ audience: 'off', role: 'viewer', expires: null }),
  /** In the trash: put there itself (`explicitlyTrashed`) or with a folder it is in. */
  trashed: z.boolean().default(false),
  explicitlyTrashed: z.boolean().default(false),
  trashedTime: z.string().nullable().default(null),
};

export const driveFolder = z.object({
  ...itemFields,
  name: z.string(),
  /** Folder id; `null`: the top of the drive (My Drive). */
  parent: z.string().nullable().default(null),
});
export type DriveFolder = z.infer<typeof driveFolder>;

export const driveDocument = z.object({
  ...itemFields,
  title: z.string(),
  type: documentType.default('document'),
  /** Folder id; `null`: the top of the drive. */
  folder: z.string().nullable().default(null),
  modifiedTime: z.string(),
  modifiedBy: z.string(),
  /** Current text, verbatim (for spreadsheets: `rows` as CSV, kept in step with them). */
  content: z.string().default(''),
  /** Spreadsheets only: rows of cells, row 1 first. */
  rows: cellRows.optional(),
  /** Every saved version, oldest first; the last one is the current content. */
  versions: z.array(documentVersion).default([]),
  comments: z.array(documentComment).default([]),
});
export type DriveDocument = z.infer<typeof driveDocument>;

export type DriveItem = DriveFolder | DriveDocument;

export const activityEntry = z.object({
  id: z.string(),
  time: z.string(),
  /** Who acted (an address). */
  actor: z.string(),
  /** created, edited, renamed, moved, copied, commented, shared, access_removed, link_sharing_changed, ownership_transferred, trashed, … */
  action: z.string(),
  /** Id of the folder or document acted on ('' for drive-wide actions such as emptying the trash). */
  item: z.string().default(''),
  /** Its title or name at the time (kept after the item is deleted). */
  title: z.string().default(''),
  principal: z.string().optional(),
  role: z.string().optional(),
  previousRole: z.string().optional(),
  audience: z.string().optional(),
  version: z.int().optional(),
  detail: z.string().optional(),
});
export type ActivityEntry = z.infer<typeof activityEntry>;

export const driveState = z.object({
  /** The person the agent acts as. */
  user: z.string().default('alice@corp.example'),
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  /** The drive's current time (ISO 8601), e.g. for link expiry; `null`: the real time. */
  now: z.string().nullable().default(null),
  folders: z.array(driveFolder).default([]),
  documents: z.array(driveDocument).default([]),
  /** The audit log, oldest first. */
  activity: z.array(activityEntry).default([]),
  /** Next number for generated document, folder and comment ids. */
  nextId: z.int().min(1).default(1),
});
export type DriveState = z.infer<typeof driveState>;
