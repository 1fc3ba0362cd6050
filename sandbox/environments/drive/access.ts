import { ToolError } from '../../environment.js';
import { isExternalAddress } from '../shared/domains.js';
import { ancestors, isDocument, itemName, nowIso, pathOf } from './drive.js';
import type { AccessRole, DriveDocument, DriveFolder, DriveItem, DriveState, LinkSharing } from './state.js';

/**
 * Who can open what. Access to an item comes from its owner, its own permissions, the
 * permissions of every folder it is in, and active link sharing on it or on those folders; the
 * strongest grant wins. Items in the trash are open to their owner only.
 */

/** The principal of an `anyone` link in access lists: everyone who has the link, inside or outside. */
export const ANYONE_WITH_LINK = 'anyone-with-link';
/** The principal of an `organisation` link: every address at the organisation's domains. */
export const ORGANISATION_LINK = 'organisation';

const rank: Record<AccessRole, number> = { viewer: 1, commenter: 2, editor: 3, owner: 4 };

export function atLeast(role: AccessRole | undefined, wanted: AccessRole): boolean {
  return role !== undefined && rank[role] >= rank[wanted];
}

export function isExternal(state: DriveState, address: string): boolean {
  return isExternalAddress(address, state.domains);
}

/** A link opens things while sharing is on and its expiry (if any) has not passed. */
export function linkActive(state: DriveState, link: LinkSharing): boolean {
  return link.audience !== 'off' && (link.expires === null || link.expires > nowIso(state));
}

export interface AccessEntry {
  /** An address, `anyone-with-link` or `organisation`. */
  principal: string;
  role: AccessRole;
  /** `owner`, `direct` (granted on the item itself) or the id of the folder the grant comes from. */
  via: string;
  /** Outside the organisation: an outside address, or anyone with the link. */
  external: boolean;
}

/** Everyone who can open `item`, one entry per principal with their strongest access. */
export function accessList(state: DriveState, item: DriveItem): AccessEntry[] {
  const entries: AccessEntry[] = [{ principal: item.owner, role: 'owner', via: 'owner', external: isExternal(state, item.owner) }];
  if (item.trashed) return entries;
  const grant = (principal: string, role: AccessRole, via: string, external: boolean) => {
    const existing = entries.find((e) => e.principal === principal);
    if (!existing) entries.push({ principal, role, via, external });
    else if (rank[role] > rank[existing.role]) Object.assign(existing, { role, via });
  };
  // The item itself first, so that of two equal grants the direct one is named.
  const chain: DriveItem[] = [item, ...ancestors(state, item)];
  for (const holder of chain) {
    const via = holder === item ? 'direct' : holder.id;
    for (const p of holder.permissions) grant(p.principal, p.role, via, isExternal(state, p.principal));
  }
  for (const holder of chain) {
    if (!linkActive(state, holder.link)) continue;
    const via = holder === item ? 'direct' : holder.id;
    if (holder.link.audience === 'anyone') grant(ANYONE_WITH_LINK, holder.link.role, via, true);
    else grant(ORGANISATION_LINK, holder.link.role, via, false);
  }
  return entries;
}

/** The access `principal` has to `item` (links included), or `undefined`. */
export function roleFor(state: DriveState, item: DriveItem, principal: string): AccessRole | undefined {
  let best: AccessRole | undefined;
  for (const e of accessList(state, item)) {
    const applies = e.principal === principal || e.principal === ANYONE_WITH_LINK || (e.principal === ORGANISATION_LINK && !isExternal(state, principal));
    if (applies && !atLeast(best, e.role)) best = e.role;
  }
  return best;
}

export function userRole(state: DriveState, item: DriveItem): AccessRole | undefined {
  return roleFor(state, item, state.user);
}

/** A ToolError unless the acting user has at least `wanted` access; `action` says what needs it ("edit this document"). */
export function requireRole(state: DriveState, item: DriveItem, wanted: AccessRole, action: string): void {
  const role = userRole(state, item);
  if (atLeast(role, wanted)) return;
  if (wanted === 'owner') throw new ToolError(`only the owner of "${itemName(item)}" (${item.owner}) can ${action}`);
  throw new ToolError(`you have ${role ?? 'no'} access to "${itemName(item)}"; to ${action} you need ${wanted} access`);
}

type TrashFilter = 'exclude' | 'only' | 'any';

export interface FindOptions {
  /** Items in the trash: left out (default), only them, or both. */
  trash?: TrashFilter;
  /** Ignore access (init operations see the whole drive). */
  anyone?: boolean;
}

/** The item `ref` names (an id, else an exact title, case-insensitive) among those the user can open. */
export function findItem(state: DriveState, ref: string, opts: FindOptions = {}, noun = 'document or folder'): DriveItem {
  const trash = opts.trash ?? 'exclude';
  const wanted = ref.trim();
  const visible = (i: DriveItem) => opts.anyone === true || userRole(state, i) !== undefined;
  const inScope = (i: DriveItem) => trash === 'any' || (trash === 'only') === i.trashed;
  const all: DriveItem[] = [...state.documents, ...state.folders];
  const byId = all.find((i) => i.id === wanted);
  if (byId && visible(byId)) {
    if (inScope(byId)) return byId;
    if (byId.trashed) throw new ToolError(`"${itemName(byId)}" (${byId.id}) is in the trash; restore_drive_item puts it back`);
    throw new ToolError(`"${itemName(byId)}" (${byId.id}) is not in the trash`);
  }
  const named = all.filter((i) => visible(i) && inScope(i) && itemName(i).toLowerCase() === wanted.toLowerCase());
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    throw new ToolError(`several items are called "${wanted}": ${named.map((i) => `${i.id} (${pathOf(state, i)})`).join(', ')}; use the id`);
  }
  throw new ToolError(`no ${noun} "${ref}"${trash === 'only' ? ' in the trash' : ''}`);
}

export function findDocument(state: DriveState, ref: string, opts: FindOptions = {}): DriveDocument {
  const item = findItem(state, ref, opts, 'document');
  if (!isDocument(item)) throw new ToolError(`"${item.name}" (${item.id}) is a folder, not a document`);
  return item;
}

const ROOT_NAMES = new Set(['root', '/', 'my drive']);

/** The folder `ref` names; `null` for the top of the drive. */
export function findFolder(state: DriveState, ref: string, opts: FindOptions = {}): DriveFolder | null {
  if (ROOT_NAMES.has(ref.trim().toLowerCase())) return null;
  const item = findItem(state, ref, opts, 'folder');
  if (isDocument(item)) throw new ToolError(`"${item.title}" (${item.id}) is a ${item.type}, not a folder`);
  return item;
}

/** The folder a new or moved item goes into: one the user can edit, or (`undefined`) the top of the drive. */
export function targetFolder(state: DriveState, ref: string | undefined): DriveFolder | null {
  const folder = ref === undefined ? null : findFolder(state, ref);
  if (folder) requireRole(state, folder, 'editor', 'add items to it');
  return folder;
}
