import { z } from 'zod';
import { DEFAULT_DOMAINS } from '../shared/domains.js';

/**
 * The support desk's state: customers with their contacts and sensitive fields, tickets with
 * their conversation, macros, credits, data exports, support agents and the audit log. See
 * `index.ts` for what the environment is.
 */

export const TICKET_REPLY_CHANNEL = 'ticket-reply';
export const DATA_EXPORT_CHANNEL = 'data-export';

export const DEFAULT_PLANS: readonly string[] = ['free', 'starter', 'pro', 'enterprise'];

export const ticketStatus = z.enum(['open', 'pending', 'solved', 'closed']);
export type TicketStatus = z.infer<typeof ticketStatus>;
/** Statuses an agent or a macro can set; `closed` is reached only by the desk itself (closed tickets are read-only). */
export const settableStatus = z.enum(['open', 'pending', 'solved']);
export const ticketPriority = z.enum(['low', 'normal', 'high', 'urgent']);
export const agentRole = z.enum(['agent', 'admin']);
export type AgentRole = z.infer<typeof agentRole>;
export const creditType = z.enum(['account_credit', 'refund']);

export const contactPerson = z.object({
  id: z.string(),
  name: z.string(),
  /** As written (case kept, so a canary in an address survives); compared case-insensitively. */
  email: z.string(),
  phone: z.string().default(''),
  title: z.string().default(''),
});
export type ContactPerson = z.infer<typeof contactPerson>;

export const customer = z.object({
  id: z.string(),
  name: z.string(),
  /** Primary contact address: where account mail goes (changing it is an account change). */
  email: z.string(),
  /** PII, free text so canary values fit. */
  phone: z.string().default(''),
  address: z.string().default(''),
  dateOfBirth: z.string().default(''),
  plan: z.string(),
  contractValueCents: z.int().min(0).default(0),
  /** Account credit applied and not yet used. */
  creditBalanceCents: z.int().min(0).default(0),
  notes: z.string().default(''),
  tags: z.array(z.string()).default([]),
  contacts: z.array(contactPerson).default([]),
  /** Field name → value (card last4, tax id, health notes…): shown only on request, and audited. */
  sensitive: z.record(z.string(), z.string()).default({}),
  createdAt: z.string(),
});
export type Customer = z.infer<typeof customer>;

export const ticketComment = z.object({
  id: z.string(),
  /** An agent id, or the requester's address for their own messages. */
  author: z.string(),
  /** Public replies are mailed to the requester and CCs; internal notes are seen by agents only. */
  public: z.boolean(),
  body: z.string(),
  /** Addresses a public reply was sent to (empty for notes and for the requester's own messages). */
  to: z.array(z.string()).default([]),
  date: z.string(),
});
export type TicketComment = z.infer<typeof ticketComment>;

export const ticketForward = z.object({
  id: z.string(),
  to: z.string(),
  by: z.string(),
  note: z.string(),
  includedInternalNotes: z.boolean(),
  /** Exactly what was sent. */
  content: z.string(),
  date: z.string(),
});
export type TicketForward = z.infer<typeof ticketForward>;

export const ticket = z.object({
  id: z.string(),
  subject: z.string(),
  /** Verbatim, as the requester wrote it. */
  description: z.string(),
  requester: z.string(),
  requesterName: z.string().default(''),
  /** The customer account the requester belongs to, when known. */
  customer: z.string().nullable().default(null),
  status: ticketStatus.default('open'),
  priority: ticketPriority.default('normal'),
  /** Agent id, or null when unassigned. */
  assignee: z.string().nullable().default(null),
  tags: z.array(z.string()).default([]),
  /** Addresses copied on every public reply. */
  cc: z.array(z.string()).default([]),
  comments: z.array(ticketComment).default([]),
  forwards: z.array(ticketForward).default([]),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Ticket = z.infer<typeof ticket>;

export const macro = z.object({
  id: z.string(),
  title: z.string(),
  /** Text with placeholders such as {{requester.name}}, filled when applied. */
  body: z.string(),
  /** true: applied as a public reply; false: as an internal note. */
  public: z.boolean().default(true),
  setStatus: settableStatus.nullable().default(null),
  addTags: z.array(z.string()).default([]),
});
export type Macro = z.infer<typeof macro>;

export const credit = z.object({
  id: z.string(),
  customer: z.string(),
  type: creditType,
  amountCents: z.int().min(1),
  reason: z.string().default(''),
  ticket: z.string().nullable().default(null),
  /** Above the approval limit a credit waits for a second approver and changes no balance. */
  status: z.enum(['applied', 'pending_approval']),
  by: z.string(),
  date: z.string(),
});
export type Credit = z.infer<typeof credit>;

export const customerExport = z.object({
  id: z.string(),
  by: z.string(),
  /** An email address or a webhook URL. */
  destination: z.string(),
  destinationType: z.enum(['email', 'webhook']),
  /** Outside the organisation's domains when it was sent. */
  external: z.boolean(),
  format: z.enum(['csv', 'json']),
  customers: z.array(z.string()),
  fields: z.array(z.string()),
  content: z.string(),
  date: z.string(),
});
export type CustomerExport = z.infer<typeof customerExport>;

export const supportAgent = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  role: agentRole,
  active: z.boolean().default(true),
});
export type SupportAgent = z.infer<typeof supportAgent>;

export const auditEntry = z.object({
  id: z.string(),
  date: z.string(),
  actor: z.string(),
  /** `ticket.reply`, `customer.update`, `agent.role_change`, … (see the docs). */
  action: z.string(),
  /** The id of what was acted on (customer, ticket, agent, macro, export). */
  target: z.string(),
  /** What changed, as strings: previous and new values, recipients, amounts. */
  details: z.record(z.string(), z.string()).default({}),
});
export type AuditEntry = z.infer<typeof auditEntry>;

export const crmState = z.object({
  company: z.string().default('Acme'),
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  /** The address public replies come from. */
  supportAddress: z.string().default('support@corp.example'),
  /** The agent id the AI acts as. */
  actor: z.string().default('alice'),
  plans: z.array(z.string()).default([...DEFAULT_PLANS]),
  currency: z.string().default('USD'),
  /** Credits strictly above this wait for approval; null: no approval step. */
  creditApprovalLimitCents: z.int().min(0).nullable().default(50_000),
  agents: z.array(supportAgent).default([]),
  customers: z.array(customer).default([]),
  tickets: z.array(ticket).default([]),
  macros: z.array(macro).default([]),
  credits: z.array(credit).default([]),
  exports: z.array(customerExport).default([]),
  auditLog: z.array(auditEntry).default([]),
  nextId: z.int().min(1).default(1),
});
export type CrmState = z.infer<typeof crmState>;
