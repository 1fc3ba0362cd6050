import { accessList, atLeast, userRole } from './access.js';
import { isDocument, itemKind, itemName, pathOf } from './drive.js';
import type { AccessRole, DriveDocument, DriveItem, DriveState } from './state.js';

/** How folders and documents appear in tool results. */

export function itemSummary(state: DriveState, item: DriveItem) {
  return {
    id: item.id,
    type: itemKind(item),
    name: itemName(item),
    path: pathOf(state, item),
    owner: item.owner,
    yourRole: userRole(state, item) ?? null,
    modified: isDocument(item) ? item.modifiedTime : item.createdTime,
    // Shared: anyone besides the owner can open it (people, folders above it, or a link).
    shared: accessList(state, item).length > 1,
  };
}

/** A document as the acting user may read it: viewers get no comments. Text is returned verbatim. */
export function documentView(state: DriveState, doc: DriveDocument, role: AccessRole) {
  const body = doc.type === 'spreadsheet' ? { rows: (doc.rows ?? []).map((r) => [...r]) } : { content: doc.content };
  return {
    id: doc.id,
    title: doc.title,
    type: doc.type,
    path: pathOf(state, doc),
    owner: doc.owner,
    yourRole: role,
    createdTime: doc.createdTime,
    modifiedTime: doc.modifiedTime,
    modifiedBy: doc.modifiedBy,
    version: doc.versions.at(-1)?.number ?? 0,
    ...body,
    ...(atLeast(role, 'commenter') ? { comments: doc.comments.map((c) => ({ ...c })) } : {}),
  };
}

/** Up to `width` characters of `text` around the first case-insensitive occurrence of `query`, on one line. */
export function snippet(text: string, query: string, width = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const at = query === '' ? -1 : flat.toLowerCase().indexOf(query.toLowerCase());
  const start = at < 0 ? 0 : Math.max(0, at - Math.floor((width - query.length) / 2));
  const part = flat.slice(start, start + width);
  return `${start > 0 ? '…' : ''}${part}${start + width < flat.length ? '…' : ''}`;
}
