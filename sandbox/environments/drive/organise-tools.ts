import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { findFolder, findItem, requireRole, targetFolder } from './access.js';
import {
  ancestors,
  descendants,
  folderArg,
  isDocument,
  itemArg,
  itemName,
  log,
  newId,
  nowIso,
  parentId,
  pathOf,
  setItemName,
  setParent,
  tool,
} from './drive.js';
import { exposing } from './exposure.js';
import type { DriveFolder, DriveItem, DriveState } from './state.js';
import { itemSummary } from './views.js';

/** Folders, renaming and moving, the trash, and permanent deletion. */

/** Puts `item` and everything in it into the trash (items inside keep whether they were trashed themselves). */
function trash(state: DriveState, item: DriveItem): void {
  const time = nowIso(state);
  Object.assign(item, { trashed: true, explicitlyTrashed: true, trashedTime: time });
  if (isDocument(item)) return;
  for (const inner of descendants(state, item)) if (!inner.trashed) Object.assign(inner, { trashed: true, explicitlyTrashed: false, trashedTime: time });
}

/** Takes `item` out of the trash, and what is inside it unless it sits in a folder that is still trashed itself. */
function untrash(state: DriveState, item: DriveItem): void {
  Object.assign(item, { trashed: false, explicitlyTrashed: false, trashedTime: null });
  if (isDocument(item)) return;
  for (const inner of descendants(state, item)) {
    if (inner.explicitlyTrashed) continue;
    if (!ancestors(state, inner).some((f) => f.explicitlyTrashed)) Object.assign(inner, { trashed: false, trashedTime: null });
  }
}

/** Removes `item` and everything in it from the drive; returns how many items went. */
function destroy(state: DriveState, item: DriveItem): number {
  const gone = new Set([item.id, ...(isDocument(item) ? [] : descendants(state, item).map((i) => i.id))]);
  state.documents = state.documents.filter((d) => !gone.has(d.id));
  state.folders = state.folders.filter((f) => !gone.has(f.id));
  log(state, item, { action: 'deleted', detail: gone.size > 1 ? `permanently, with ${gone.size - 1} items inside` : 'permanently' });
  return gone.size;
}

/** A trashed item the user put in the trash themselves (items trashed with their folder go back with it). */
function trashedByUser(state: DriveState, ref: string, action: string): DriveItem {
  const item = findItem(state, ref, { trash: 'only' });
  requireRole(state, item, 'owner', action);
  if (!item.explicitlyTrashed) {
    const folder = ancestors(state, item).find((f) => f.explicitlyTrashed);
    throw new ToolError(
      `"${itemName(item)}" is in the trash with the folder "${folder?.name ?? '?'}" (${folder?.id ?? '?'}); ${action.split(' ')[0]} the folder`,
    );
  }
  return item;
}

export const organiseTools: ToolSpec<DriveState>[] = [
  tool({
    name: 'create_drive_folder',
    description: 'Create a folder, at the top of the drive or inside a folder you can edit.',
    input: z.object({ name: z.string().min(1).describe('Name of the new folder'), parent: folderArg.optional() }),
    handler(state, args) {
      const parent = targetFolder(state, args.parent);
      // Not wrapped in `exposing`: a new folder is empty, nothing in it can reach anyone yet.
      const folder: DriveFolder = {
        id: newId(state, 'folder'),
        name: args.name,
        parent: parent?.id ?? null,
        owner: state.user,
        createdTime: nowIso(state),
        permissions: [],
        link: { audience: 'off', role: 'viewer', expires: null },
        trashed: false,
        explicitlyTrashed: false,
        trashedTime: null,
      };
      state.folders.push(folder);
      log(state, folder, { action: 'created' });
      return itemSummary(state, folder);
    },
  }),
  tool({
    name: 'rename_drive_item',
    description: 'Rename a document or folder. Needs editor access.',
    input: z.object({ item: itemArg, name: z.string().min(1).describe('The new title or name') }),
    handler(state, args, ctx) {
      const item = findItem(state, args.item);
      requireRole(state, item, 'editor', 'rename it');
      const previous = itemName(item);
      exposing(state, ctx, () => {
        setItemName(item, args.name);
        log(state, item, { action: 'renamed', detail: `from "${previous}"` });
      });
      return { id: item.id, name: args.name, previous };
    },
  }),
  tool({
    name: 'move_drive_item',
    description:
      "Move a document or folder into another folder you can edit. It then gets that folder's sharing in addition to its own. Needs editor access; only the owner can move it to the top of the drive.",
    input: z.object({ item: itemArg, folder: folderArg.describe('Destination folder id or exact name; "root" for the top of the drive') }),
    handler(state, args, ctx) {
      const item = findItem(state, args.item);
      requireRole(state, item, 'editor', 'move it');
      const destination = findFolder(state, args.folder);
      if (destination) {
        requireRole(state, destination, 'editor', 'move items into it');
        if (destination.id === item.id || ancestors(state, destination).some((f) => f.id === item.id)) {
          throw new ToolError(`cannot move "${itemName(item)}" into itself or a folder inside it`);
        }
      } else requireRole(state, item, 'owner', 'move it to the top of the drive');
      const from = parentId(item);
      const fromPath = pathOf(state, item);
      if (from === (destination?.id ?? null)) throw new ToolError(`"${itemName(item)}" is already there (${fromPath})`);
      exposing(state, ctx, () => {
        setParent(item, destination?.id ?? null);
        log(state, item, { action: 'moved', detail: `from ${from ?? 'root'} to ${destination?.id ?? 'root'}` });
      });
      return { id: item.id, from: fromPath, to: pathOf(state, item) };
    },
  }),
  tool({
    name: 'trash_drive_item',
    description:
      'Move a document or folder you own to the trash (a folder goes with everything in it). People it was shared with lose access until it is restored.',
    input: z.object({ item: itemArg }),
    handler(state, args) {
      const item = findItem(state, args.item);
      requireRole(state, item, 'owner', 'move it to the trash');
      trash(state, item);
      log(state, item, { action: 'trashed' });
      return { id: item.id, name: itemName(item), status: 'in trash', ...(isDocument(item) ? {} : { itemsInside: descendants(state, item).length }) };
    },
  }),
  tool({
    name: 'restore_drive_item',
    description: 'Restore a document or folder from the trash to where it was (to the top of the drive when its folder is in the trash too).',
    input: z.object({ item: itemArg }),
    handler(state, args, ctx) {
      const item = trashedByUser(state, args.item, 'restore it');
      return exposing(state, ctx, () => {
        const folderTrashed = ancestors(state, item).some((f) => f.trashed);
        if (folderTrashed) setParent(item, null);
        untrash(state, item);
        log(state, item, { action: 'restored', ...(folderTrashed ? { detail: 'to root: its folder is in the trash' } : {}) });
        return { id: item.id, name: itemName(item), status: 'restored', path: pathOf(state, item) };
      });
    },
  }),
  tool({
    name: 'delete_drive_item_forever',
    description:
      'Permanently delete a document or folder that is in the trash, with its version history and comments (a folder with everything in it). This cannot be undone.',
    input: z.object({ item: itemArg }),
    handler(state, args) {
      const item = trashedByUser(state, args.item, 'delete it permanently');
      const deleted = destroy(state, item);
      return { id: item.id, name: itemName(item), status: 'deleted permanently', itemsDeleted: deleted };
    },
  }),
  tool({
    name: 'empty_drive_trash',
    description: 'Permanently delete everything you put in the trash. This cannot be undone.',
    input: z.object({}),
    handler(state) {
      const trashed = [...state.folders, ...state.documents].filter((i) => i.explicitlyTrashed && i.owner === state.user);
      let deleted = 0;
      const ids: string[] = [];
      for (const item of trashed) {
        // A trashed item inside a trashed folder may already be gone with the folder.
        if (![...state.folders, ...state.documents].includes(item)) continue;
        deleted += destroy(state, item);
        ids.push(item.id);
      }
      log(state, null, { action: 'trash_emptied', detail: `${deleted} items deleted permanently` });
      return { status: 'emptied', itemsDeleted: deleted, deleted: ids };
    },
  }),
];
