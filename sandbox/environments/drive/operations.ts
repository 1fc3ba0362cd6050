import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { normalizeDomains, organisationDomainsArg, requireAddress } from '../shared/domains.js';
import { isoDate, nextSerialId } from '../shared/ids.js';
import { findDocument, findFolder, findItem } from './access.js';
import { addDocument, itemName, newId, nowIso, operation } from './drive.js';
import { checkSheetSize } from './sheets.js';
import { documentType, grantableRole, linkAudience, type DriveFolder, type DriveItem, type DriveState, type LinkSharing } from './state.js';

/** Init-script operations: the acting user and clock, folders, documents with history, comments, sharing, past activity. Nothing here is egress. */

const everything = { anyone: true, trash: 'any' } as const;

const rowsArg = z.array(z.array(z.string()).describe('One row: cell values, column A first'));
const permissionsArg = z
  .array(z.object({ email: z.string().min(1).describe('Email address'), role: grantableRole.describe('viewer, commenter or editor') }))
  .optional()
  .describe('People it is shared with');
const linkArg = z
  .object({
    audience: linkAudience.describe('off, organisation or anyone'),
    role: grantableRole.optional().describe('viewer (default), commenter or editor'),
    expires: z.string().optional().describe('ISO 8601 expiry (may be in the past: an expired link)'),
  })
  .optional()
  .describe('Link sharing (default off)');
const ownerArg = z.string().min(1).optional().describe('Owner address (default: the acting user)');
const trashedArg = z.boolean().optional().describe('Put it in the trash (default false)');

function link(args: { audience: LinkSharing['audience']; role?: LinkSharing['role']; expires?: string } | undefined): LinkSharing {
  if (!args) return { audience: 'off', role: 'viewer', expires: null };
  return { audience: args.audience, role: args.role ?? 'viewer', expires: args.expires === undefined ? null : isoDate(args.expires, 'expires') };
}

/** Ownership, sharing and trash of a seeded item; inside a trashed folder it is trashed with it. */
function settle(
  state: DriveState,
  item: DriveItem,
  parent: DriveFolder | null,
  args: { permissions?: Array<{ email: string; role: LinkSharing['role'] }>; link?: Parameters<typeof link>[0]; trashed?: boolean },
) {
  for (const p of args.permissions ?? []) grant(item, requireAddress(p.email), p.role);
  item.link = link(args.link);
  if (args.trashed) Object.assign(item, { trashed: true, explicitlyTrashed: true, trashedTime: nowIso(state) });
  else if (parent?.trashed) Object.assign(item, { trashed: true, explicitlyTrashed: false, trashedTime: parent.trashedTime });
}

function grant(item: DriveItem, principal: string, role: LinkSharing['role']): void {
  if (principal === item.owner) throw new ToolError(`${principal} owns ${item.id}`);
  const existing = item.permissions.find((p) => p.principal === principal);
  if (existing) existing.role = role;
  else item.permissions.push({ principal, role });
}

export const driveOperations: OperationSpec<DriveState>[] = [
  operation({
    name: 'configure',
    description: 'Set the acting user, the organisation domains and the drive clock.',
    input: z.object({
      user: z.string().min(1).optional().describe('Address the agent acts as (default alice@corp.example)'),
      domains: organisationDomainsArg,
      now: z.string().nullable().optional().describe('The current time, ISO 8601 (null: the real time)'),
    }),
    apply(state, args) {
      if (args.user !== undefined) state.user = requireAddress(args.user);
      if (args.domains !== undefined) state.domains = normalizeDomains(args.domains);
      if (args.now !== undefined) state.now = args.now === null ? null : isoDate(args.now, 'now');
    },
  }),
  operation({
    name: 'add_folder',
    description: 'Add a folder, with its owner, sharing and place in the tree.',
    input: z.object({
      name: z.string().min(1).describe('Folder name'),
      id: z.string().min(1).optional().describe('Stable id (default folder-<n>)'),
      parent: z.string().min(1).optional().describe('Parent folder id or name (default: the top of the drive)'),
      owner: ownerArg,
      created: z.string().optional().describe('ISO 8601 creation time (default now)'),
      permissions: permissionsArg,
      link: linkArg,
      trashed: trashedArg,
    }),
    apply(state, args) {
      const parent = args.parent === undefined ? null : findFolder(state, args.parent, everything);
      const folder: DriveFolder = {
        id: newId(state, 'folder', args.id),
        name: args.name,
        parent: parent?.id ?? null,
        owner: args.owner === undefined ? state.user : requireAddress(args.owner),
        createdTime: args.created === undefined ? nowIso(state) : isoDate(args.created, 'created'),
        permissions: [],
        link: link(undefined),
        trashed: false,
        explicitlyTrashed: false,
        trashedTime: null,
      };
      settle(state, folder, parent, args);
      state.folders.push(folder);
    },
  }),
  operation({
    name: 'add_document',
    description: 'Add a text document or spreadsheet with its content, earlier versions, owner and sharing.',
    input: z.object({
      title: z.string().min(1).describe('Document title'),
      id: z.string().min(1).optional().describe('Stable id (default doc-<n>)'),
      type: documentType.optional().describe('document (default) or spreadsheet'),
      folder: z.string().min(1).optional().describe('Folder id or name (default: the top of the drive)'),
      owner: ownerArg,
      content: z.string().optional().describe('Current text of a document'),
      rows: rowsArg.optional().describe('Current rows of a spreadsheet'),
      history: z
        .array(
          z.object({
            content: z.string().optional().describe('Text of that version (documents)'),
            rows: rowsArg.optional().describe('Rows of that version (spreadsheets)'),
            time: z.string().optional().describe('ISO 8601 time it was saved (default: created)'),
            author: z.string().min(1).optional().describe('Who saved it (default: the owner)'),
          }),
        )
        .optional()
        .describe('Earlier versions, oldest first; the current content is saved after them'),
      created: z.string().optional().describe('ISO 8601 creation time (default now)'),
      modified: z.string().optional().describe('ISO 8601 time of the current version (default: created)'),
      modified_by: z.string().min(1).optional().describe('Author of the current version (default: the owner)'),
      permissions: permissionsArg,
      link: linkArg,
      trashed: trashedArg,
    }),
    apply(state, args) {
      const type = args.type ?? (args.rows !== undefined ? 'spreadsheet' : 'document');
      const history = args.history ?? [];
      if (type === 'spreadsheet' && (args.content !== undefined || history.some((h) => h.content !== undefined)))
        throw new ToolError('a spreadsheet is seeded with rows, not content');
      if (type === 'document' && (args.rows !== undefined || history.some((h) => h.rows !== undefined)))
        throw new ToolError('rows are for spreadsheets (type: spreadsheet)');
      for (const rows of [args.rows ?? [], ...history.map((h) => h.rows ?? [])]) checkSheetSize(rows);
      const parent = args.folder === undefined ? null : findFolder(state, args.folder, everything);
      const owner = args.owner === undefined ? state.user : requireAddress(args.owner);
      const created = args.created === undefined ? nowIso(state) : isoDate(args.created, 'created');
      const doc = addDocument(state, {
        id: args.id,
        title: args.title,
        type,
        folder: parent?.id ?? null,
        owner,
        content: args.content,
        rows: args.rows,
        created,
        modified: args.modified === undefined ? undefined : isoDate(args.modified, 'modified'),
        modifiedBy: args.modified_by === undefined ? undefined : requireAddress(args.modified_by),
        history: history.map((h) => ({
          content: h.content,
          rows: h.rows,
          time: h.time === undefined ? undefined : isoDate(h.time, 'history time'),
          author: h.author === undefined ? undefined : requireAddress(h.author),
        })),
      });
      settle(state, doc, parent, args);
    },
  }),
  operation({
    name: 'add_comment',
    description: 'Add a comment someone left on a document.',
    input: z.object({
      document: z.string().min(1).describe('Document id or title'),
      author: z.string().min(1).describe("Author's address"),
      body: z.string().describe('Comment text'),
      id: z.string().min(1).optional().describe('Stable id (default cm-<n>)'),
      time: z.string().optional().describe('ISO 8601 (default now)'),
      quote: z.string().optional().describe('The passage it is attached to'),
      resolved: z.boolean().optional().describe('Already resolved (default false)'),
    }),
    apply(state, args) {
      const doc = findDocument(state, args.document, everything);
      doc.comments.push({
        id: newId(state, 'cm', args.id),
        author: requireAddress(args.author),
        body: args.body,
        time: args.time === undefined ? nowIso(state) : isoDate(args.time, 'time'),
        quote: args.quote ?? '',
        resolved: args.resolved ?? false,
      });
    },
  }),
  operation({
    name: 'share',
    description: 'Share a seeded document or folder with a person (no notification, no egress).',
    input: z.object({
      item: z.string().min(1).describe('Document or folder id or title'),
      email: z.string().min(1).describe('Email address'),
      role: grantableRole.describe('viewer, commenter or editor'),
    }),
    apply(state, args) {
      grant(findItem(state, args.item, everything), requireAddress(args.email), args.role);
    },
  }),
  operation({
    name: 'set_link',
    description: 'Set the link sharing of a seeded document or folder.',
    input: z.object({
      item: z.string().min(1).describe('Document or folder id or title'),
      audience: linkAudience.describe('off, organisation or anyone'),
      role: grantableRole.optional().describe('viewer (default), commenter or editor'),
      expires: z.string().optional().describe('ISO 8601 expiry (may be in the past)'),
    }),
    apply(state, args) {
      findItem(state, args.item, everything).link = link(args);
    },
  }),
  operation({
    name: 'add_activity',
    description: 'Add an entry to the activity log: something that happened before the run.',
    input: z.object({
      action: z.string().min(1).describe('What happened, e.g. shared, edited, downloaded'),
      actor: z.string().min(1).describe('Who did it (address)'),
      item: z.string().optional().describe('Id of the item it was about'),
      title: z.string().optional().describe('Title of the item at the time (default: its current title)'),
      time: z.string().optional().describe('ISO 8601 (default now)'),
      principal: z.string().optional().describe('The person it concerned, e.g. who it was shared with'),
      role: z.string().optional().describe('The role involved, e.g. editor'),
      detail: z.string().optional().describe('Free text'),
    }),
    apply(state, args) {
      const known = [...state.documents, ...state.folders].find((i) => i.id === args.item);
      state.activity.push({
        id: nextSerialId(state.activity, 'act'),
        time: args.time === undefined ? nowIso(state) : isoDate(args.time, 'time'),
        actor: args.actor,
        action: args.action,
        item: args.item ?? '',
        title: args.title ?? (known ? itemName(known) : ''),
        ...(args.principal !== undefined ? { principal: args.principal } : {}),
        ...(args.role !== undefined ? { role: args.role } : {}),
        ...(args.detail !== undefined ? { detail: args.detail } : {}),
      });
    },
  }),
];
