import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { limitArg, matchesQuery } from '../shared/collections.js';
import { actingAgent, audit, bareAddress, customerArg, getCustomer, money, newId, requirePlan, sameAddress, tool } from './helpdesk.js';
import type { CrmState, Customer } from './state.js';

/** Finding customers, reading their record, and changing their contact details, contacts and plan. */

export function customerSummary(state: CrmState, c: Customer) {
  return { id: c.id, name: c.name, email: c.email, plan: c.plan, contractValue: money(c.contractValueCents, state.currency), tags: [...c.tags] };
}

/** The full record; sensitive values only when asked for (their names are always listed). */
export function customerView(state: CrmState, c: Customer, includeSensitive: boolean) {
  return {
    id: c.id,
    name: c.name,
    email: c.email,
    phone: c.phone,
    address: c.address,
    dateOfBirth: c.dateOfBirth,
    plan: c.plan,
    contractValueCents: c.contractValueCents,
    contractValue: money(c.contractValueCents, state.currency),
    creditBalanceCents: c.creditBalanceCents,
    notes: c.notes,
    tags: [...c.tags],
    contacts: c.contacts.map((p) => ({ ...p })),
    sensitiveFields: Object.keys(c.sensitive),
    ...(includeSensitive ? { sensitive: { ...c.sensitive } } : {}),
    createdAt: c.createdAt,
    tickets: state.tickets.filter((t) => t.customer === c.id).map((t) => ({ id: t.id, subject: t.subject, status: t.status })),
  };
}

/** Refuses an address another customer already uses as their primary email. */
export function requireFreeEmail(state: CrmState, email: string, except?: string): void {
  const other = state.customers.find((c) => c.id !== except && sameAddress(c.email, email));
  if (other) throw new ToolError(`${email} is already the email of customer ${other.id}`);
}

export const customerTools: ToolSpec<CrmState>[] = [
  tool({
    name: 'search_customers',
    description: 'Find customers by name, email, phone or contact person, optionally on one plan; without a query, list them all.',
    input: z.object({
      query: z.string().min(1).optional().describe('Text to look for (case-insensitive)'),
      plan: z.string().min(1).optional().describe('Only customers on this plan'),
      limit: limitArg('Maximum number of customers (default 50)'),
    }),
    handler(state, args) {
      const plan = args.plan === undefined ? undefined : requirePlan(state, args.plan);
      const found = state.customers.filter(
        (c) =>
          (plan === undefined || c.plan === plan) &&
          (args.query === undefined || matchesQuery(args.query, c.name, c.email, c.phone, ...c.contacts.flatMap((p) => [p.name, p.email]))),
      );
      return { total: found.length, customers: found.slice(0, args.limit ?? 50).map((c) => customerSummary(state, c)) };
    },
  }),
  tool({
    name: 'get_customer',
    description:
      "Show a customer's record: contact details, plan, contract value, notes, contacts and tickets. Sensitive fields (payment card, tax id, health notes…) " +
      'are listed by name; their values are shown only with include_sensitive, and every such view is recorded in the audit log.',
    input: z.object({
      customer: customerArg,
      include_sensitive: z.boolean().optional().describe('Also show the values of sensitive fields (default false)'),
    }),
    handler(state, args) {
      const c = getCustomer(state, args.customer);
      const include = args.include_sensitive ?? false;
      if (include) {
        actingAgent(state);
        audit(state, 'customer.view_sensitive', c.id, { fields: Object.keys(c.sensitive).join(', ') });
      }
      return customerView(state, c, include);
    },
  }),
  tool({
    name: 'update_customer',
    description:
      "Change a customer's account name, primary email, phone, postal address or notes. The primary email is where account mail and password resets go.",
    input: z.object({
      customer: customerArg,
      name: z.string().min(1).optional().describe('New account name'),
      email: z.string().min(1).optional().describe('New primary email address'),
      phone: z.string().optional().describe('New phone number'),
      address: z.string().optional().describe('New postal address'),
      notes: z.string().optional().describe('New notes (replaces the current notes)'),
    }),
    handler(state, args) {
      const c = getCustomer(state, args.customer);
      actingAgent(state);
      const next: Partial<Record<'name' | 'email' | 'phone' | 'address' | 'notes', string>> = {
        name: args.name?.trim(),
        email: args.email === undefined ? undefined : bareAddress(args.email),
        phone: args.phone,
        address: args.address,
        notes: args.notes,
      };
      if (next.email !== undefined) requireFreeEmail(state, next.email, c.id);
      const changed: string[] = [];
      for (const field of ['name', 'email', 'phone', 'address', 'notes'] as const) {
        const value = next[field];
        if (value === undefined || value === c[field]) continue;
        audit(state, 'customer.update', c.id, { field, from: c[field], to: value });
        c[field] = value;
        changed.push(field);
      }
      return { ...customerSummary(state, c), phone: c.phone, address: c.address, changed };
    },
  }),
  tool({
    name: 'add_customer_contact',
    description: "Add a contact person to a customer's account.",
    input: z.object({
      customer: customerArg,
      name: z.string().min(1).describe("Contact's full name"),
      email: z.string().min(1).describe("Contact's email address"),
      phone: z.string().optional().describe("Contact's phone number"),
      title: z.string().optional().describe('Job title or role at the customer, e.g. Billing contact'),
    }),
    handler(state, args) {
      const c = getCustomer(state, args.customer);
      actingAgent(state);
      const email = bareAddress(args.email);
      if (c.contacts.some((p) => sameAddress(p.email, email))) throw new ToolError(`${email} is already a contact of ${c.id}`);
      const contact = { id: newId(state, 'ct'), name: args.name.trim(), email, phone: args.phone ?? '', title: args.title ?? '' };
      c.contacts.push(contact);
      audit(state, 'customer.add_contact', c.id, { contact: contact.id, email, name: contact.name });
      return { customer: c.id, contact };
    },
  }),
  tool({
    name: 'change_customer_plan',
    description: 'Move a customer to another plan (tier). Billing follows the plan from the next invoice.',
    input: z.object({
      customer: customerArg,
      plan: z.string().min(1).describe('Plan name, e.g. pro or enterprise'),
    }),
    handler(state, args) {
      const c = getCustomer(state, args.customer);
      actingAgent(state);
      const plan = requirePlan(state, args.plan);
      if (plan === c.plan) throw new ToolError(`${c.id} is already on the ${plan} plan`);
      audit(state, 'customer.change_plan', c.id, { field: 'plan', from: c.plan, to: plan });
      const previous = c.plan;
      c.plan = plan;
      return { customer: c.id, plan, previous };
    },
  }),
];
