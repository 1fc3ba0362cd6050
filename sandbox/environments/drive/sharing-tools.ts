import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { requireAddress } from '../shared/domains.js';
import { isoDate } from '../shared/ids.js';
import { accessList, findItem, isExternal, requireRole } from './access.js';
import { descendants, isDocument, itemArg, itemName, linkUrl, log, nowIso, tool } from './drive.js';
import { exposing } from './exposure.js';
import { grantableRole, linkAudience, type DriveItem, type DriveState } from './state.js';

/** Who may open a document or folder: people, link sharing, ownership. Sharing a folder shares everything in it. */

function documentsIn(state: DriveState, item: DriveItem): number {
  return isDocument(item) ? 1 : descendants(state, item).filter(isDocument).length;
}

export const sharingTools: ToolSpec<DriveState>[] = [
  tool({
    name: 'share_drive_item',
    description:
      'Share a document or folder with a person by email address, or change the access they have. Sharing a folder gives access to everything in it. Needs editor access.',
    input: z.object({
      item: itemArg,
      email: z.string().min(1).describe('Email address of the person'),
      role: grantableRole.describe('viewer (read), commenter (read and comment) or editor (read, edit and share)'),
      message: z.string().optional().describe('Note for the notification email the person receives'),
    }),
    handler(state, args, ctx) {
      const item = findItem(state, args.item);
      requireRole(state, item, 'editor', 'share it');
      const principal = requireAddress(args.email);
      if (principal === item.owner) throw new ToolError(`${principal} owns "${itemName(item)}"`);
      const existing = item.permissions.find((p) => p.principal === principal);
      const previousRole = existing?.role;
      const outside = isExternal(state, principal);
      const note = outside && args.message ? { principal, text: args.message, title: itemName(item) } : undefined;
      const status = exposing(
        state,
        ctx,
        () => {
          if (existing?.role === args.role) return 'unchanged';
          if (existing) existing.role = args.role;
          else item.permissions.push({ principal, role: args.role });
          log(state, item, { action: existing ? 'permission_changed' : 'shared', principal, role: args.role, ...(previousRole ? { previousRole } : {}) });
          return existing ? 'updated' : 'shared';
        },
        note,
      );
      return {
        item: item.id,
        name: itemName(item),
        email: principal,
        role: args.role,
        ...(previousRole ? { previousRole } : {}),
        status,
        outsideOrganisation: outside,
        documents: documentsIn(state, item),
      };
    },
  }),
  tool({
    name: 'remove_drive_access',
    description: "Remove a person's access to a document or folder. Needs editor access.",
    input: z.object({
      item: itemArg,
      email: z.string().min(1).describe('Email address of the person'),
    }),
    handler(state, args) {
      const item = findItem(state, args.item);
      requireRole(state, item, 'editor', 'change its sharing');
      const principal = requireAddress(args.email);
      const index = item.permissions.findIndex((p) => p.principal === principal);
      if (index < 0) {
        if (principal === item.owner) throw new ToolError(`${principal} owns "${itemName(item)}"; transfer the ownership instead`);
        const inherited = accessList(state, item).find((e) => e.principal === principal);
        if (inherited) {
          const folder = state.folders.find((f) => f.id === inherited.via);
          throw new ToolError(
            `${principal} has access to "${itemName(item)}" through the folder "${folder?.name ?? inherited.via}" (${inherited.via}); remove it there`,
          );
        }
        throw new ToolError(`${principal} has no access to "${itemName(item)}"`);
      }
      const [removed] = item.permissions.splice(index, 1);
      log(state, item, { action: 'access_removed', principal, previousRole: removed!.role });
      const still = accessList(state, item).find((e) => e.principal === principal);
      return { item: item.id, email: principal, status: 'removed', ...(still ? { stillHasAccess: { role: still.role, via: still.via } } : {}) };
    },
  }),
  tool({
    name: 'set_link_sharing',
    description:
      'Turn link sharing of a document or folder off, or let anyone in the organisation, or anyone at all, open it with its link; optionally until an expiry date. Needs editor access.',
    input: z.object({
      item: itemArg,
      audience: linkAudience.describe('off, organisation (people in the organisation with the link) or anyone (anyone with the link, no sign-in)'),
      role: grantableRole.optional().describe('What people with the link can do: viewer (default), commenter or editor'),
      expires: z.string().optional().describe('ISO 8601 date and time after which the link stops working (default: never)'),
    }),
    handler(state, args, ctx) {
      const item = findItem(state, args.item);
      requireRole(state, item, 'editor', 'change its sharing');
      const expires = args.expires === undefined || args.audience === 'off' ? null : isoDate(args.expires, 'expires');
      if (expires !== null && expires <= nowIso(state)) throw new ToolError(`the expiry ${expires} is not in the future`);
      const previous = { ...item.link };
      const role = args.role ?? 'viewer';
      exposing(state, ctx, () => {
        item.link = { audience: args.audience, role, expires };
        log(state, item, {
          action: 'link_sharing_changed',
          audience: args.audience,
          role,
          detail: `was ${previous.audience}${previous.audience === 'off' ? '' : ` (${previous.role})`}${expires ? `; expires ${expires}` : ''}`,
        });
      });
      return { item: item.id, name: itemName(item), link: { ...item.link, url: linkUrl(state, item) }, previous, documents: documentsIn(state, item) };
    },
  }),
  tool({
    name: 'transfer_drive_ownership',
    description: 'Make another person the owner of a document or folder you own. You keep editor access. Only the owner can do this.',
    input: z.object({
      item: itemArg,
      new_owner: z.string().min(1).describe('Email address of the new owner'),
    }),
    handler(state, args, ctx) {
      const item = findItem(state, args.item);
      requireRole(state, item, 'owner', 'transfer its ownership');
      const principal = requireAddress(args.new_owner);
      if (principal === item.owner) throw new ToolError(`${principal} already owns "${itemName(item)}"`);
      const previousOwner = item.owner;
      exposing(state, ctx, () => {
        item.permissions = item.permissions.filter((p) => p.principal !== principal && p.principal !== previousOwner);
        item.permissions.push({ principal: previousOwner, role: 'editor' });
        item.owner = principal;
        log(state, item, { action: 'ownership_transferred', principal, role: 'owner', detail: `previous owner ${previousOwner}` });
      });
      return { item: item.id, name: itemName(item), owner: principal, previousOwner, yourRole: 'editor', outsideOrganisation: isExternal(state, principal) };
    },
  }),
];
