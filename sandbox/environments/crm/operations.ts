import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { normalizeDomains, organisationDomainsArg } from '../shared/domains.js';
import { isoDate } from '../shared/ids.js';
import { CUSTOMER_FIELDS, fieldKey } from './export-tools.js';
import { addTags, bareAddress, getCustomer, newId, operation, requirePlan, sameAddress } from './helpdesk.js';
import { agentRole, type ContactPerson, type CrmState } from './state.js';
import { requireFreeEmail } from './customer-tools.js';

/** Init-script operations for the desk itself, its agents and its customers (tickets are in ticket-operations.ts). */

const contactInput = z.object({
  name: z.string().min(1).describe('Full name'),
  email: z.string().min(1).describe('Email address (case is kept)'),
  phone: z.string().optional().describe('Phone number'),
  title: z.string().optional().describe('Job title or role, e.g. Billing contact'),
  id: z.string().min(1).optional().describe('Stable id (default ct-<n>)'),
});

function newContact(state: CrmState, args: z.infer<typeof contactInput>): ContactPerson {
  return { id: newId(state, 'ct', args.id), name: args.name, email: bareAddress(args.email), phone: args.phone ?? '', title: args.title ?? '' };
}

export const deskOperations: OperationSpec<CrmState>[] = [
  operation({
    name: 'configure',
    description: 'Set the company, its email domains, the support address, the acting agent, the plans, the currency and the credit approval limit.',
    input: z.object({
      company: z.string().min(1).optional().describe('Company name (default Acme)'),
      domains: organisationDomainsArg,
      support_address: z.string().min(1).optional().describe('Address public replies come from (default support@corp.example)'),
      actor: z.string().min(1).optional().describe('Agent id the AI acts as (default alice); add it with add_agent'),
      plans: z.array(z.string().min(1)).min(1).optional().describe('Plan names (default free, starter, pro, enterprise)'),
      currency: z.string().length(3).optional().describe('ISO currency code (default USD)'),
      credit_approval_limit_cents: z
        .int()
        .min(0)
        .nullable()
        .optional()
        .describe('Credits above this many cents wait for approval (default 50000); null: no approval'),
    }),
    apply(state, args) {
      if (args.company !== undefined) state.company = args.company;
      if (args.domains !== undefined) state.domains = normalizeDomains(args.domains);
      if (args.support_address !== undefined) state.supportAddress = bareAddress(args.support_address, 'support_address');
      if (args.actor !== undefined) state.actor = args.actor.trim();
      if (args.plans !== undefined) state.plans = [...args.plans];
      if (args.currency !== undefined) state.currency = args.currency.toUpperCase();
      if (args.credit_approval_limit_cents !== undefined) state.creditApprovalLimitCents = args.credit_approval_limit_cents;
    },
  }),
  operation({
    name: 'add_agent',
    description: 'Add a support agent account, or update the one with this id (e.g. make the default alice a plain agent).',
    input: z.object({
      id: z.string().min(1).describe('Login id, e.g. bob'),
      name: z.string().min(1).optional().describe('Full name (default: the id)'),
      email: z.string().min(1).optional().describe('Email address (default <id>@ the first organisation domain)'),
      role: agentRole.optional().describe('agent (default for new accounts) or admin'),
      active: z.boolean().optional().describe('Can sign in (default true)'),
    }),
    apply(state, args) {
      const existing = state.agents.find((a) => a.id === args.id.trim());
      const email = args.email === undefined ? undefined : bareAddress(args.email);
      if (existing) {
        if (args.name !== undefined) existing.name = args.name;
        if (email !== undefined) existing.email = email;
        if (args.role !== undefined) existing.role = args.role;
        if (args.active !== undefined) existing.active = args.active;
        return;
      }
      const id = args.id.trim();
      const address = email ?? `${id}@${state.domains[0] ?? 'corp.example'}`;
      state.agents.push({ id, name: args.name ?? id, email: address, role: args.role ?? 'agent', active: args.active ?? true });
    },
  }),
  operation({
    name: 'add_customer',
    description: 'Add a customer account with its PII, plan, contract, contacts and sensitive fields.',
    input: z.object({
      name: z.string().min(1).describe('Account name (a company or a person)'),
      email: z.string().min(1).describe('Primary email address (case is kept)'),
      id: z.string().min(1).optional().describe('Stable id (default cus-<n>)'),
      phone: z.string().optional().describe('Phone number (free text)'),
      address: z.string().optional().describe('Postal address (free text)'),
      date_of_birth: z.string().optional().describe('Date of birth (free text, so a canary fits)'),
      plan: z.string().min(1).optional().describe('Plan (default: the first configured plan)'),
      contract_value_cents: z.int().min(0).optional().describe('Yearly contract value in cents (default 0)'),
      credit_balance_cents: z.int().min(0).optional().describe('Unused account credit in cents (default 0)'),
      notes: z.string().optional().describe('Account notes (free text, visible to agents)'),
      tags: z.array(z.string().min(1)).optional().describe('Tags, e.g. vip'),
      contacts: z.array(contactInput).optional().describe('Contact people at the customer'),
      sensitive: z.record(z.string(), z.string()).optional().describe('Sensitive fields by name, e.g. { card_last4: "4242", tax_id: "…", health_notes: "…" }'),
      created_at: z.string().optional().describe('ISO 8601 creation date (default now)'),
    }),
    apply(state, args) {
      const email = bareAddress(args.email);
      requireFreeEmail(state, email);
      for (const key of Object.keys(args.sensitive ?? {})) {
        if (CUSTOMER_FIELDS.some((f) => fieldKey(f) === fieldKey(key))) throw new ToolError(`sensitive field "${key}" has the name of a customer field`);
      }
      const tags: string[] = [];
      addTags(tags, args.tags ?? []);
      const contacts: ContactPerson[] = [];
      state.customers.push({
        id: newId(state, 'cus', args.id),
        name: args.name,
        email,
        phone: args.phone ?? '',
        address: args.address ?? '',
        dateOfBirth: args.date_of_birth ?? '',
        plan: args.plan === undefined ? (state.plans[0] ?? 'free') : requirePlan(state, args.plan),
        contractValueCents: args.contract_value_cents ?? 0,
        creditBalanceCents: args.credit_balance_cents ?? 0,
        notes: args.notes ?? '',
        tags,
        contacts,
        sensitive: { ...(args.sensitive ?? {}) },
        createdAt: isoDate(args.created_at, 'created_at'),
      });
      // Added one by one once the customer is in the state, so their ids are checked against it and each other.
      for (const c of args.contacts ?? []) contacts.push(newContact(state, c));
    },
  }),
  operation({
    name: 'add_contact',
    description: "Add a contact person to an existing customer's account.",
    input: contactInput.extend({ customer: z.string().min(1).describe('Customer id, email or name') }),
    apply(state, args) {
      const c = getCustomer(state, args.customer);
      if (c.contacts.some((p) => sameAddress(p.email, args.email))) throw new ToolError(`${args.email} is already a contact of ${c.id}`);
      c.contacts.push(newContact(state, args));
    },
  }),
];
