import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { isoDate } from '../shared/ids.js';
import { addTags, audit, bareAddress, customerOfAddress, distinctAddresses, getAgent, getCustomer, getTicket, newId, operation } from './helpdesk.js';
import { creditType, settableStatus, ticketPriority, ticketStatus, type CrmState, type Ticket, type TicketComment } from './state.js';

/** Init-script operations for what happened before the run: tickets and their conversation, macros, credits, audit entries. */

const commentInput = z.object({
  body: z.string().describe('Text, verbatim'),
  author: z.string().min(1).optional().describe("Agent id, or the requester's address (default: the requester)"),
  public: z.boolean().optional().describe('Public reply (default true) or internal note (false)'),
  date: z.string().optional().describe('ISO 8601 (default now)'),
  id: z.string().min(1).optional().describe('Stable id (default cmt-<n>)'),
});

/** A seeded comment: history, so it is never mailed (no egress). */
function pushComment(state: CrmState, t: Ticket, args: z.infer<typeof commentInput>): void {
  const author = args.author?.trim() ?? t.requester;
  const isPublic = args.public ?? true;
  const byAgent = state.agents.some((a) => a.id === author);
  const to = isPublic && byAgent ? distinctAddresses([t.requester, ...t.cc]) : [];
  const comment: TicketComment = { id: newId(state, 'cmt', args.id), author, public: isPublic, body: args.body, to, date: isoDate(args.date) };
  t.comments.push(comment);
  if (comment.date > t.updatedAt) t.updatedAt = comment.date;
}

export const ticketOperations: OperationSpec<CrmState>[] = [
  operation({
    name: 'add_ticket',
    description: 'Add a support ticket; the requester is linked to the customer whose primary or contact address it is, unless customer is given.',
    input: z.object({
      subject: z.string().min(1).describe('Subject line'),
      description: z.string().describe("The requester's message, verbatim (a place for injected instructions)"),
      requester: z.string().min(1).describe("Requester's email address (case is kept)"),
      requester_name: z.string().optional().describe("Requester's name (default: the matching contact's name)"),
      id: z.string().min(1).optional().describe('Stable id (default tkt-<n>)'),
      customer: z.string().min(1).nullable().optional().describe('Customer id, email or name (null: no account)'),
      status: ticketStatus.optional().describe('open (default), pending, solved or closed'),
      priority: ticketPriority.optional().describe('low, normal (default), high or urgent'),
      assignee: z.string().min(1).optional().describe('Agent id (default unassigned)'),
      tags: z.array(z.string().min(1)).optional().describe('Tags'),
      cc: z.array(z.string().min(1)).optional().describe('Addresses copied on public replies'),
      created_at: z.string().optional().describe('ISO 8601 (default now)'),
      comments: z.array(commentInput).optional().describe('The conversation so far, oldest first'),
    }),
    apply(state, args) {
      const requester = bareAddress(args.requester, 'requester');
      const customer =
        args.customer === null ? undefined : args.customer === undefined ? customerOfAddress(state, requester) : getCustomer(state, args.customer);
      const contact = customer?.contacts.find((p) => p.email.toLowerCase() === requester.toLowerCase());
      const createdAt = isoDate(args.created_at, 'created_at');
      const t: Ticket = {
        id: newId(state, 'tkt', args.id),
        subject: args.subject,
        description: args.description,
        requester,
        requesterName: args.requester_name ?? contact?.name ?? (customer && customer.email.toLowerCase() === requester.toLowerCase() ? customer.name : ''),
        customer: customer?.id ?? null,
        status: args.status ?? 'open',
        priority: args.priority ?? 'normal',
        assignee: args.assignee === undefined ? null : getAgent(state, args.assignee).id,
        tags: [],
        cc: distinctAddresses((args.cc ?? []).map((a) => bareAddress(a, 'cc'))),
        comments: [],
        forwards: [],
        createdAt,
        updatedAt: createdAt,
      };
      addTags(t.tags, args.tags ?? []);
      state.tickets.push(t);
      for (const c of args.comments ?? []) pushComment(state, t, c);
    },
  }),
  operation({
    name: 'add_comment',
    description: 'Add a message to a ticket: a follow-up from the requester, or an earlier agent reply or internal note (never sent).',
    input: commentInput.extend({ ticket: z.string().min(1).describe('Ticket id') }),
    apply(state, args) {
      pushComment(state, getTicket(state, args.ticket), args);
    },
  }),
  operation({
    name: 'add_macro',
    description: 'Add a macro (canned reply) agents can apply.',
    input: z.object({
      title: z.string().min(1).describe('Title'),
      body: z.string().describe('Text; placeholders such as {{requester.name}} are filled when applied'),
      id: z.string().min(1).optional().describe('Stable id (default mac-<n>)'),
      public: z.boolean().optional().describe('Public reply (default true) or internal note'),
      set_status: settableStatus.optional().describe('Status the ticket gets: open, pending or solved'),
      add_tags: z.array(z.string().min(1)).optional().describe('Tags the ticket gets'),
    }),
    apply(state, args) {
      if (state.macros.some((m) => m.title.toLowerCase() === args.title.toLowerCase())) throw new ToolError(`a macro titled "${args.title}" already exists`);
      const tags: string[] = [];
      addTags(tags, args.add_tags ?? []);
      const id = newId(state, 'mac', args.id);
      state.macros.push({ id, title: args.title, body: args.body, public: args.public ?? true, setStatus: args.set_status ?? null, addTags: tags });
    },
  }),
  operation({
    name: 'add_credit',
    description: 'Record a credit or refund given before the run (balances are not changed).',
    input: z.object({
      customer: z.string().min(1).describe('Customer id, email or name'),
      amount_cents: z.int().min(1).describe('Amount in cents'),
      type: creditType.optional().describe('account_credit (default) or refund'),
      reason: z.string().optional().describe('Reason'),
      ticket: z.string().min(1).optional().describe('Ticket id'),
      status: z.enum(['applied', 'pending_approval']).optional().describe('applied (default) or pending_approval'),
      by: z.string().min(1).optional().describe('Agent id who gave it (default: the acting agent)'),
      date: z.string().optional().describe('ISO 8601 (default now)'),
      id: z.string().min(1).optional().describe('Stable id (default cr-<n>)'),
    }),
    apply(state, args) {
      state.credits.push({
        id: newId(state, 'cr', args.id),
        customer: getCustomer(state, args.customer).id,
        type: args.type ?? 'account_credit',
        amountCents: args.amount_cents,
        reason: args.reason ?? '',
        ticket: args.ticket === undefined ? null : getTicket(state, args.ticket).id,
        status: args.status ?? 'applied',
        by: args.by ?? state.actor,
        date: isoDate(args.date),
      });
    },
  }),
  operation({
    name: 'add_audit_entry',
    description: 'Add an entry to the audit log (history before the run).',
    input: z.object({
      actor: z.string().min(1).describe('Agent id (or any actor name)'),
      action: z.string().min(1).describe('Action, e.g. customer.update'),
      target: z.string().min(1).describe('Id acted on'),
      details: z.record(z.string(), z.string()).optional().describe('Details as strings'),
      date: z.string().optional().describe('ISO 8601 (default now)'),
    }),
    apply(state, args) {
      audit(state, args.action, args.target, { ...(args.details ?? {}) }, args.actor, isoDate(args.date));
    },
  }),
];
