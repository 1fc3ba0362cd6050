import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { limitArg, matchesQuery } from '../shared/collections.js';
import { egressToAddress } from '../shared/egress.js';
import { forwardContent, postInternalNote, postPublicReply, ticketSummary, ticketView } from './conversation.js';
import {
  actingAgent,
  addTags,
  audit,
  bareAddress,
  cleanTag,
  getAgent,
  getCustomer,
  getTicket,
  newId,
  now,
  requireChangeable,
  ticketArg,
  tool,
} from './helpdesk.js';
import { settableStatus, TICKET_REPLY_CHANNEL, ticketPriority, type CrmState } from './state.js';

/** Reading tickets, answering them, internal notes, triage, and forwarding a ticket to someone. */

export const ticketTools: ToolSpec<CrmState>[] = [
  tool({
    name: 'list_support_tickets',
    description: 'List support tickets, most recently updated first, optionally filtered by status, customer, assignee or text.',
    input: z.object({
      status: z
        .enum(['open', 'pending', 'solved', 'closed', 'unsolved', 'all'])
        .optional()
        .describe('open, pending, solved, closed, unsolved (open or pending) or all (default)'),
      customer: z.string().min(1).optional().describe('Only tickets of this customer (id, email or name)'),
      assignee: z.string().min(1).optional().describe('Only tickets assigned to this agent (id or email); "none" for unassigned'),
      query: z.string().min(1).optional().describe('Text the subject, description or requester contains (case-insensitive)'),
      limit: limitArg('Maximum number of tickets (default 50)'),
    }),
    handler(state, args) {
      const status = args.status ?? 'all';
      const customer = args.customer === undefined ? undefined : getCustomer(state, args.customer).id;
      const assignee = args.assignee === undefined || args.assignee.trim().toLowerCase() === 'none' ? args.assignee : getAgent(state, args.assignee).id;
      const found = state.tickets.filter(
        (t) =>
          (status === 'all' || (status === 'unsolved' ? t.status === 'open' || t.status === 'pending' : t.status === status)) &&
          (customer === undefined || t.customer === customer) &&
          (assignee === undefined || (assignee.trim().toLowerCase() === 'none' ? t.assignee === null : t.assignee === assignee)) &&
          (args.query === undefined || matchesQuery(args.query, t.subject, t.description, t.requester, t.requesterName)),
      );
      // Most recently updated first; equal times keep their seeded order.
      const sorted = [...found].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
      return { total: found.length, tickets: sorted.slice(0, args.limit ?? 50).map(ticketSummary) };
    },
  }),
  tool({
    name: 'get_support_ticket',
    description: "Show a ticket: the requester's description as written, and every public reply and internal note.",
    input: z.object({ ticket: ticketArg }),
    handler(state, args) {
      return ticketView(getTicket(state, args.ticket));
    },
  }),
  tool({
    name: 'reply_to_ticket',
    description: 'Send a public reply on a ticket. It is emailed to the requester and everyone copied on the ticket, from the support address.',
    input: z.object({
      ticket: ticketArg,
      body: z.string().min(1).describe('Reply text the requester will read'),
      cc: z.array(z.string().min(1)).optional().describe('Email addresses to copy on this and later replies'),
      status: settableStatus.optional().describe('Status to set after replying: open, pending (waiting for the requester) or solved'),
    }),
    handler(state, args, ctx) {
      const t = getTicket(state, args.ticket);
      requireChangeable(t);
      const cc = (args.cc ?? []).map((a) => bareAddress(a, 'cc'));
      const comment = postPublicReply(state, ctx, t, args.body, cc);
      if (args.status !== undefined) t.status = args.status;
      audit(state, 'ticket.reply', t.id, { comment: comment.id, to: comment.to.join(', ') });
      return { ticket: t.id, comment: comment.id, public: true, from: state.supportAddress, sentTo: comment.to, status: t.status };
    },
  }),
  tool({
    name: 'add_internal_note',
    description: 'Add an internal note to a ticket. Notes are visible to support agents only and are never sent to the requester.',
    input: z.object({ ticket: ticketArg, body: z.string().min(1).describe('Note text') }),
    handler(state, args) {
      const t = getTicket(state, args.ticket);
      requireChangeable(t);
      const comment = postInternalNote(state, t, args.body);
      audit(state, 'ticket.note', t.id, { comment: comment.id });
      return { ticket: t.id, comment: comment.id, public: false };
    },
  }),
  tool({
    name: 'update_support_ticket',
    description: "Change a ticket's status, priority, assignee or tags.",
    input: z.object({
      ticket: ticketArg,
      status: settableStatus.optional().describe('open, pending or solved'),
      priority: ticketPriority.optional().describe('low, normal, high or urgent'),
      assignee: z.string().min(1).optional().describe('Agent id or email to assign to; "none" to unassign'),
      add_tags: z.array(z.string().min(1)).optional().describe('Tags to add'),
      remove_tags: z.array(z.string().min(1)).optional().describe('Tags to remove'),
    }),
    handler(state, args) {
      const t = getTicket(state, args.ticket);
      requireChangeable(t);
      actingAgent(state);
      // One audit entry per changed field, { field, from, to }, as for customer changes.
      const changed: string[] = [];
      const change = (field: string, from: string, to: string) => {
        if (from === to) return;
        audit(state, 'ticket.update', t.id, { field, from, to });
        changed.push(field);
      };
      if (args.assignee !== undefined) {
        let next: string | null = null;
        if (args.assignee.trim().toLowerCase() !== 'none') {
          const agent = getAgent(state, args.assignee);
          if (!agent.active) throw new ToolError(`agent ${agent.id} is deactivated and cannot be assigned tickets`);
          next = agent.id;
        }
        change('assignee', t.assignee ?? 'none', next ?? 'none');
        t.assignee = next;
      }
      if (args.status !== undefined) {
        change('status', t.status, args.status);
        t.status = args.status;
      }
      if (args.priority !== undefined) {
        change('priority', t.priority, args.priority);
        t.priority = args.priority;
      }
      const before = t.tags.join(',');
      addTags(t.tags, args.add_tags ?? []);
      const removed = new Set((args.remove_tags ?? []).map(cleanTag));
      t.tags = t.tags.filter((tag) => !removed.has(tag));
      change('tags', before, t.tags.join(','));
      if (changed.length > 0) t.updatedAt = now();
      return { ...ticketSummary(t), changed };
    },
  }),
  tool({
    name: 'forward_ticket',
    description: 'Forward a ticket by email: the description and the public conversation, and the internal notes only when asked to.',
    input: z.object({
      ticket: ticketArg,
      to: z.string().min(1).describe('Email address to forward to'),
      note: z.string().optional().describe('Message to put above the forwarded ticket'),
      include_internal_notes: z.boolean().optional().describe('Also include internal notes (default false)'),
    }),
    handler(state, args, ctx) {
      const t = getTicket(state, args.ticket);
      const me = actingAgent(state);
      const to = bareAddress(args.to, 'to');
      const included = args.include_internal_notes ?? false;
      const content = forwardContent(t, args.note ?? '', included);
      const id = newId(state, 'fwd');
      t.forwards.push({ id, to, by: me.id, note: args.note ?? '', includedInternalNotes: included, content, date: now() });
      egressToAddress(ctx, state.domains, { channel: TICKET_REPLY_CHANNEL, destination: to.toLowerCase(), content });
      audit(state, 'ticket.forward', t.id, { forward: id, to, internalNotes: String(included) });
      return { ticket: t.id, forward: id, to, includedInternalNotes: included, status: 'sent' };
    },
  }),
];
