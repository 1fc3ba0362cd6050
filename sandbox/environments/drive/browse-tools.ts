import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { compareText, limitArg, matchesQuery } from '../shared/collections.js';
import { accessList, findDocument, findFolder, findItem, requireRole, userRole } from './access.js';
import { descendants, documentArg, folderArg, isDocument, itemArg, itemKind, itemName, linkUrl, parentId, pathOf, tool } from './drive.js';
import { documentView, itemSummary, snippet } from './views.js';
import type { DriveItem, DriveState } from './state.js';

/** Finding and reading: folders, search, documents, versions, sharing settings, the trash, the activity log. */

const versionArg = z.int().min(1).describe('Version number, as listed by list_document_versions');

/** Folders first, then by name. */
function byKindAndName(a: DriveItem, b: DriveItem): number {
  if (isDocument(a) !== isDocument(b)) return isDocument(a) ? 1 : -1;
  return compareText(itemName(a).toLowerCase(), itemName(b).toLowerCase());
}

function openable(state: DriveState): DriveItem[] {
  return [...state.folders, ...state.documents].filter((i) => !i.trashed && userRole(state, i) !== undefined);
}

export const browseTools: ToolSpec<DriveState>[] = [
  tool({
    name: 'list_drive_items',
    description:
      'List the folders and documents in a folder of the drive. Without a folder, lists the top of the drive, including items others shared with you.',
    input: z.object({ folder: folderArg.optional() }),
    handler(state, args) {
      const folder = args.folder === undefined ? null : findFolder(state, args.folder);
      const visible = openable(state);
      const ids = new Set(visible.map((i) => i.id));
      // At the top: items without a folder, and shared items whose folder the user cannot open.
      const inside = visible.filter((i) => (folder ? parentId(i) === folder.id : parentId(i) === null || !ids.has(parentId(i)!)));
      const items = inside.sort(byKindAndName).map((i) => itemSummary(state, i));
      const where = folder ? { id: folder.id, name: folder.name, path: pathOf(state, folder) } : { id: 'root', name: 'My Drive', path: '/' };
      return { folder: where, count: items.length, items };
    },
  }),
  tool({
    name: 'search_drive',
    description: 'Search the documents and folders you can open by title and by text (case-insensitive).',
    input: z.object({
      query: z.string().min(1).describe('Text to look for in titles, folder names and document text'),
      type: z.enum(['document', 'spreadsheet', 'folder']).optional().describe('Only this kind of item'),
      limit: limitArg('Maximum number of results (default 50)'),
    }),
    handler(state, args) {
      const hits = openable(state)
        .filter((i) => args.type === undefined || itemKind(i) === args.type)
        .filter((i) => matchesQuery(args.query, itemName(i), isDocument(i) ? i.content : ''))
        .sort(byKindAndName);
      const results = hits.slice(0, args.limit ?? 50).map((i) => ({
        ...itemSummary(state, i),
        ...(isDocument(i) ? { snippet: snippet(i.content, args.query) } : {}),
      }));
      return { query: args.query, total: hits.length, results };
    },
  }),
  tool({
    name: 'read_document',
    description: 'Read a document: its text (for a spreadsheet, its rows of cells), details, and comments when you can see them.',
    input: z.object({ document: documentArg }),
    handler(state, args) {
      const doc = findDocument(state, args.document);
      return documentView(state, doc, userRole(state, doc)!);
    },
  }),
  tool({
    name: 'list_document_versions',
    description: 'List the saved versions of a document, newest first (who saved each and when). Needs editor access.',
    input: z.object({ document: documentArg }),
    handler(state, args) {
      const doc = findDocument(state, args.document);
      requireRole(state, doc, 'editor', 'see its version history');
      const current = doc.versions.at(-1)?.number;
      const versions = [...doc.versions]
        .reverse()
        .map((v) => ({ number: v.number, time: v.time, author: v.author, size: v.content.length, current: v.number === current }));
      return { document: doc.id, title: doc.title, count: versions.length, versions };
    },
  }),
  tool({
    name: 'read_document_version',
    description: 'Read the content of one saved version of a document. Needs editor access.',
    input: z.object({ document: documentArg, version: versionArg }),
    handler(state, args) {
      const doc = findDocument(state, args.document);
      requireRole(state, doc, 'editor', 'see its version history');
      const v = doc.versions.find((x) => x.number === args.version);
      if (!v) throw new ToolError(`"${doc.title}" has no version ${args.version} (versions: ${doc.versions.map((x) => x.number).join(', ') || 'none'})`);
      const body = v.rows ? { rows: v.rows.map((r) => [...r]) } : { content: v.content };
      return { document: doc.id, title: doc.title, number: v.number, time: v.time, author: v.author, current: v === doc.versions.at(-1), ...body };
    },
  }),
  tool({
    name: 'get_sharing_settings',
    description: 'Show who can open a document or folder (people, access through folders above it, link sharing) and its link settings.',
    input: z.object({ item: itemArg }),
    handler(state, args) {
      const item = findItem(state, args.item);
      return {
        id: item.id,
        name: itemName(item),
        type: itemKind(item),
        owner: item.owner,
        yourRole: userRole(state, item)!,
        link: { ...item.link, url: linkUrl(state, item) },
        permissions: item.permissions.map((p) => ({ ...p })),
        access: accessList(state, item),
      };
    },
  }),
  tool({
    name: 'list_drive_trash',
    description: 'List the items you put in the trash (they can be restored or permanently deleted).',
    input: z.object({}),
    handler(state) {
      const items = [...state.folders, ...state.documents]
        .filter((i) => i.explicitlyTrashed && i.owner === state.user)
        .sort(byKindAndName)
        .map((i) => ({ ...itemSummary(state, i), trashedTime: i.trashedTime, ...(isDocument(i) ? {} : { itemsInside: descendants(state, i).length }) }));
      return { count: items.length, items };
    },
  }),
  tool({
    name: 'list_drive_activity',
    description: 'Show the activity log of the drive (edits, shares, moves, deletions…), newest first.',
    input: z.object({
      item: z.string().min(1).optional().describe('Only entries about this item: its id, or its title at the time'),
      limit: limitArg('Maximum number of entries (default 50)'),
    }),
    handler(state, args) {
      const ref = args.item?.trim().toLowerCase();
      const entries = state.activity.filter((e) => ref === undefined || e.item.toLowerCase() === ref || e.title.toLowerCase() === ref);
      // Newest first; entries of the same time: the later logged first.
      const ordered = entries.map((e, i) => ({ e, i })).sort((a, b) => compareText(b.e.time, a.e.time) || b.i - a.i);
      const shown = ordered.slice(0, args.limit ?? 50).map(({ e }) => ({ ...e }));
      return { total: entries.length, entries: shown };
    },
  }),
];
