import type { EgressRecord } from '../../../engine/trajectory.js';
import type { ToolContext } from '../../environment.js';
import { accessList, ANYONE_WITH_LINK, atLeast } from './access.js';
import { linkUrl } from './drive.js';
import { DRIVE_SHARE_CHANNEL, PUBLIC_LINK_CHANNEL, type AccessRole, type DriveDocument, type DriveState } from './state.js';

/**
 * Egress as a difference: what every outside audience (an outside address, or anyone with a
 * link) can read of every document, before and after a tool acts. Whatever an audience can read
 * afterwards that it could not before has left the organisation — whether it got there by a
 * share, a folder share, a link, a move into a shared folder, a restore from the trash, an
 * ownership transfer, or by being written into a document an outsider already reads.
 *
 * What a role reads: viewers the title and the text; commenters also the comments; editors and
 * owners also every saved version.
 */

interface Piece {
  label: string | null;
  text: string;
}

function pieces(doc: DriveDocument, role: AccessRole): Piece[] {
  const out: Piece[] = [{ label: null, text: doc.title }];
  if (doc.content !== '') out.push({ label: null, text: doc.content });
  if (atLeast(role, 'commenter')) {
    for (const c of doc.comments) out.push({ label: `[comment by ${c.author}${c.quote ? ` on "${c.quote}"` : ''}]`, text: c.body });
  }
  if (atLeast(role, 'editor')) {
    for (const v of doc.versions) if (v.content !== '') out.push({ label: `[version ${v.number} by ${v.author}, ${v.time}]`, text: v.content });
  }
  return out;
}

/** Document id → outside principal → the texts it can read. */
export type Exposure = Map<string, Map<string, Set<string>>>;

export function exposureOf(state: DriveState): Exposure {
  const out: Exposure = new Map();
  for (const doc of state.documents) {
    const audiences = new Map<string, Set<string>>();
    for (const entry of accessList(state, doc)) {
      if (entry.external) audiences.set(entry.principal, new Set(pieces(doc, entry.role).map((p) => p.text)));
    }
    out.set(doc.id, audiences);
  }
  return out;
}

/** A note that travels with a share (the notification mail's message) to one principal. */
export interface ShareNote {
  principal: string;
  text: string;
  /** Title of what was shared, for a note whose share exposed nothing new. */
  title: string;
}

/**
 * Reports, one record per document and outside audience, what became readable since `before`:
 * channel `drive-share` to an address, `public-link` (destination the document's link) to anyone.
 * Content: the title, then each new text (labelled comments and versions). Returns the records.
 */
export function reportExposure(state: DriveState, before: Exposure, ctx: ToolContext, note?: ShareNote): EgressRecord[] {
  const records: Array<EgressRecord & { principal: string }> = [];
  for (const doc of state.documents) {
    for (const entry of accessList(state, doc)) {
      if (!entry.external) continue;
      const seen = new Set(before.get(doc.id)?.get(entry.principal) ?? []);
      const fresh: Piece[] = [];
      for (const p of pieces(doc, entry.role)) {
        if (seen.has(p.text)) continue;
        seen.add(p.text);
        fresh.push(p);
      }
      if (fresh.length === 0) continue;
      const lines = fresh[0]!.text === doc.title && fresh[0]!.label === null ? [] : [doc.title];
      for (const p of fresh) lines.push(p.label === null ? p.text : `${p.label}\n${p.text}`);
      const publicLink = entry.principal === ANYONE_WITH_LINK;
      records.push({
        principal: entry.principal,
        channel: publicLink ? PUBLIC_LINK_CHANNEL : DRIVE_SHARE_CHANNEL,
        destination: publicLink ? linkUrl(state, doc) : entry.principal,
        content: lines.join('\n'),
      });
    }
  }
  if (note && note.text !== '') {
    // The message goes out once, in the mail that announces the share.
    const first = records.find((r) => r.principal === note.principal);
    const message = `[message] ${note.text}`;
    if (first) first.content = `${message}\n${first.content}`;
    else records.push({ principal: note.principal, channel: DRIVE_SHARE_CHANNEL, destination: note.principal, content: `${note.title}\n${message}` });
  }
  const out = records.map(({ channel, destination, content }) => ({ channel, destination, content }));
  for (const r of out) ctx.egress(r);
  return out;
}

/** Runs `work` (which changes the drive) and reports what it exposed to outside audiences. */
export function exposing<T>(state: DriveState, ctx: ToolContext, work: () => T, note?: ShareNote): T {
  const before = exposureOf(state);
  const result = work();
  reportExposure(state, before, ctx, note);
  return result;
}
