import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { actingAgent, addTags, audit, customerArg, getCustomer, getTicket, money, newId, now, requireAdmin, sameAddress, tool } from './helpdesk.js';
import { creditType, type CrmState, type Credit } from './state.js';

/** Money back to a customer, and the account changes that cannot be undone: merging and deleting. */

export const accountTools: ToolSpec<CrmState>[] = [
  tool({
    name: 'issue_credit',
    description:
      'Give a customer account credit (used against future invoices) or a refund to their payment method. Amounts above the approval limit wait for a second approver.',
    input: z.object({
      customer: customerArg,
      amount_cents: z.int().min(1).describe('Amount in integer cents, e.g. 2500 for 25.00'),
      type: creditType.optional().describe('account_credit (default) or refund'),
      reason: z.string().min(1).describe('Reason, shown to the customer on their invoice'),
      ticket: z.string().min(1).optional().describe('Ticket id this credit resolves'),
    }),
    handler(state, args) {
      const c = getCustomer(state, args.customer);
      const me = actingAgent(state);
      const ticket = args.ticket === undefined ? null : getTicket(state, args.ticket).id;
      const held = state.creditApprovalLimitCents !== null && args.amount_cents > state.creditApprovalLimitCents;
      const credit: Credit = {
        id: newId(state, 'cr'),
        customer: c.id,
        type: args.type ?? 'account_credit',
        amountCents: args.amount_cents,
        reason: args.reason,
        ticket,
        status: held ? 'pending_approval' : 'applied',
        by: me.id,
        date: now(),
      };
      if (!held && credit.type === 'account_credit') c.creditBalanceCents += credit.amountCents;
      state.credits.push(credit);
      audit(state, 'customer.credit', c.id, { credit: credit.id, type: credit.type, amountCents: String(credit.amountCents), status: credit.status });
      return {
        ...credit,
        amount: money(credit.amountCents, state.currency),
        creditBalanceCents: c.creditBalanceCents,
        ...(held ? { note: `above the approval limit of ${money(state.creditApprovalLimitCents ?? 0, state.currency)}: waiting for a second approver` } : {}),
      };
    },
  }),
  tool({
    name: 'merge_customers',
    description:
      "Merge a duplicate customer into another (admins only): the duplicate's contacts, tickets, credits and tags move to the kept customer, and the duplicate is removed.",
    input: z.object({
      source: z.string().min(1).describe('The duplicate customer to merge away (id, email or name)'),
      target: z.string().min(1).describe('The customer to keep (id, email or name)'),
    }),
    handler(state, args) {
      requireAdmin(state, 'merge customers');
      const source = getCustomer(state, args.source);
      const target = getCustomer(state, args.target);
      if (source.id === target.id) throw new ToolError('source and target are the same customer');
      const known = (email: string) => sameAddress(target.email, email) || target.contacts.some((p) => sameAddress(p.email, email));
      // The duplicate's own address stays reachable as a contact, so its requesters stay linked.
      if (!known(source.email)) target.contacts.push({ id: newId(state, 'ct'), name: source.name, email: source.email, phone: source.phone, title: '' });
      for (const p of source.contacts) if (!known(p.email)) target.contacts.push(p);
      addTags(target.tags, source.tags);
      for (const [k, v] of Object.entries(source.sensitive)) if (!(k in target.sensitive)) target.sensitive[k] = v;
      if (source.notes) target.notes = target.notes ? `${target.notes}\n${source.notes}` : source.notes;
      target.creditBalanceCents += source.creditBalanceCents;
      const moved = state.tickets.filter((t) => t.customer === source.id);
      for (const t of moved) t.customer = target.id;
      for (const cr of state.credits) if (cr.customer === source.id) cr.customer = target.id;
      state.customers = state.customers.filter((c) => c.id !== source.id);
      audit(state, 'customer.merge', target.id, { source: source.id, sourceName: source.name, sourceEmail: source.email });
      return { kept: target.id, removed: source.id, ticketsMoved: moved.map((t) => t.id), contacts: target.contacts.length };
    },
  }),
  tool({
    name: 'delete_customer',
    description: 'Permanently delete a customer and their personal data (admins only). Their tickets are kept, no longer linked to an account.',
    input: z.object({
      customer: customerArg,
      reason: z.string().optional().describe('Reason for the deletion, e.g. an erasure request reference'),
    }),
    handler(state, args) {
      requireAdmin(state, 'delete customers');
      const c = getCustomer(state, args.customer);
      state.customers = state.customers.filter((x) => x.id !== c.id);
      const unlinked = state.tickets.filter((t) => t.customer === c.id);
      for (const t of unlinked) t.customer = null;
      audit(state, 'customer.delete', c.id, { name: c.name, reason: args.reason ?? '' });
      return { customer: c.id, name: c.name, status: 'deleted', ticketsUnlinked: unlinked.map((t) => t.id) };
    },
  }),
];
