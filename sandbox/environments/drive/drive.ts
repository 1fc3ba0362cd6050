import { z } from 'zod';
import { claimId, nextSerialId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { csv } from './sheets.js';
import type { ActivityEntry, DocumentType, DocumentVersion, DriveDocument, DriveFolder, DriveItem, DriveState } from './state.js';

/** The drive's own structure: ids, the clock, the folder tree, saving versions, the activity log. */

export const { tool, operation } = specBuilders<DriveState>();

export const itemArg = z.string().min(1).describe('Id of the document or folder (e.g. doc-4, folder-2), or its exact title');
export const documentArg = z.string().min(1).describe('Id of the document (e.g. doc-4) or its exact title');
export const folderArg = z.string().min(1).describe('Folder id (e.g. folder-2) or exact name; "root" for the top of the drive');

/** The drive's current time: the configured `now`, else the real time. */
export function nowIso(state: DriveState): string {
  return state.now ?? new Date().toISOString();
}

function allIds(state: DriveState): Set<string> {
  const ids = new Set<string>();
  for (const f of state.folders) ids.add(f.id);
  for (const d of state.documents) {
    ids.add(d.id);
    for (const c of d.comments) ids.add(c.id);
  }
  return ids;
}

/** A new id for a document (`doc`), folder (`folder`) or comment (`cm`); never one in use or given by the init script. */
export function newId(state: DriveState, prefix: string, explicit?: string): string {
  return claimId(state, prefix, allIds(state), explicit);
}

export function isDocument(item: DriveItem): item is DriveDocument {
  return 'title' in item;
}

export function itemName(item: DriveItem): string {
  return isDocument(item) ? item.title : item.name;
}

export function setItemName(item: DriveItem, name: string): void {
  if (isDocument(item)) item.title = name;
  else item.name = name;
}

/** `document`, `spreadsheet` or `folder`. */
export function itemKind(item: DriveItem): string {
  return isDocument(item) ? item.type : 'folder';
}

export function parentId(item: DriveItem): string | null {
  return isDocument(item) ? item.folder : item.parent;
}

export function setParent(item: DriveItem, folder: string | null): void {
  if (isDocument(item)) item.folder = folder;
  else item.parent = folder;
}

/** The folders an item is in, innermost first (a broken or cyclic chain simply ends). */
export function ancestors(state: DriveState, item: DriveItem): DriveFolder[] {
  const chain: DriveFolder[] = [];
  const seen = new Set<string>([item.id]);
  let next = parentId(item);
  while (next !== null && !seen.has(next)) {
    seen.add(next);
    const folder = state.folders.find((f) => f.id === next);
    if (!folder) break;
    chain.push(folder);
    next = folder.parent;
  }
  return chain;
}

/** `/Finance/2024/Payroll`: the item's place in the drive, by names. */
export function pathOf(state: DriveState, item: DriveItem): string {
  return `/${[...ancestors(state, item)]
    .reverse()
    .map((f) => f.name)
    .concat(itemName(item))
    .join('/')}`;
}

/** Every folder and document inside `folder`, at any depth. */
export function descendants(state: DriveState, folder: DriveFolder): DriveItem[] {
  const inside = (item: DriveItem) => ancestors(state, item).some((f) => f.id === folder.id);
  return [...state.folders.filter(inside), ...state.documents.filter(inside)];
}

/** Appends a version (always, also when nothing changed: creation and seeded history) and makes it the current content. */
export function pushVersion(doc: DriveDocument, body: { content?: string; rows?: string[][] }, time: string, author: string): DocumentVersion {
  const rows = doc.type === 'spreadsheet' ? (body.rows ?? []).map((r) => [...r]) : undefined;
  const content = rows ? csv(rows) : (body.content ?? '');
  const number = (doc.versions.at(-1)?.number ?? 0) + 1;
  const version: DocumentVersion = { id: `v${number}`, number, time, author, content, ...(rows ? { rows: rows.map((r) => [...r]) } : {}) };
  doc.versions.push(version);
  doc.content = content;
  if (rows) doc.rows = rows;
  doc.modifiedTime = time;
  doc.modifiedBy = author;
  return version;
}

/**
 * Saves new content as the document's next version, by the acting user (spreadsheets: new rows,
 * their CSV as the content). Returns the version, or `undefined` when nothing changed.
 */
export function saveVersion(state: DriveState, doc: DriveDocument, body: { content?: string; rows?: string[][] }): DocumentVersion | undefined {
  const unchanged = doc.type === 'spreadsheet' ? JSON.stringify(body.rows ?? []) === JSON.stringify(doc.rows ?? []) : body.content === doc.content;
  return unchanged ? undefined : pushVersion(doc, body, nowIso(state), state.user);
}

export interface NewDocument {
  id?: string;
  title: string;
  type: DocumentType;
  folder: string | null;
  owner: string;
  content?: string;
  rows?: string[][];
  /** ISO 8601 (default now); also the time of seeded versions without one. */
  created?: string;
  /** Time and author of the current version (default: created, the owner). */
  modified?: string;
  modifiedBy?: string;
  /** Earlier versions, oldest first; the current content becomes the version after them. */
  history?: Array<{ content?: string; rows?: string[][]; time?: string; author?: string }>;
}

/** Adds a document to the drive: not shared, not trashed, its content as the last version. */
export function addDocument(state: DriveState, d: NewDocument): DriveDocument {
  const created = d.created ?? nowIso(state);
  const doc: DriveDocument = {
    id: newId(state, 'doc', d.id),
    title: d.title,
    type: d.type,
    folder: d.folder,
    owner: d.owner,
    createdTime: created,
    modifiedTime: created,
    modifiedBy: d.owner,
    content: '',
    ...(d.type === 'spreadsheet' ? { rows: [] } : {}),
    versions: [],
    comments: [],
    permissions: [],
    link: { audience: 'off', role: 'viewer', expires: null },
    trashed: false,
    explicitlyTrashed: false,
    trashedTime: null,
  };
  for (const h of d.history ?? []) pushVersion(doc, h, h.time ?? created, h.author ?? d.owner);
  pushVersion(doc, { content: d.content, rows: d.rows }, d.modified ?? created, d.modifiedBy ?? d.owner);
  state.documents.push(doc);
  return doc;
}

type LogFields = Omit<ActivityEntry, 'id' | 'time' | 'actor' | 'item' | 'title'>;

/** Appends to the activity log an action of the acting user on `item` (`null`: drive-wide). */
export function log(state: DriveState, item: DriveItem | null, fields: LogFields): ActivityEntry {
  const entry: ActivityEntry = {
    id: nextSerialId(state.activity, 'act'),
    time: nowIso(state),
    actor: state.user,
    item: item?.id ?? '',
    title: item ? itemName(item) : '',
    ...fields,
  };
  state.activity.push(entry);
  return entry;
}

/** The address a document or folder opens at; the destination of `public-link` egress. */
export function linkUrl(state: DriveState, item: DriveItem): string {
  const host = `drive.${state.domains[0] ?? 'corp.example'}`;
  return isDocument(item) ? `https://${host}/d/${item.id}` : `https://${host}/folders/${item.id}`;
}
