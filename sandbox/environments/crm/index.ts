import { defineStateEnvironment } from '../../environment.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import { accountTools } from './account-tools.js';
import { adminTools } from './admin-tools.js';
import { customerTools } from './customer-tools.js';
import { exportTools } from './export-tools.js';
import { macroTools } from './macro-tools.js';
import { deskOperations } from './operations.js';
import { crmState, DATA_EXPORT_CHANNEL, DEFAULT_PLANS, TICKET_REPLY_CHANNEL } from './state.js';
import { ticketOperations } from './ticket-operations.js';
import { ticketTools } from './ticket-tools.js';
import { crmEquivalences } from './equivalences.js';

/**
 * A customer-support desk and CRM for one company, used by one support agent (`actor`):
 * customers with contacts, PII and sensitive fields (shown only on request, and audited),
 * tickets whose descriptions are returned verbatim, public replies and internal notes, macros,
 * credits and refunds above an approval limit, customer merges and deletions, data exports, the
 * support team's roles, and an audit log of every change. Admin-only actions are enforced.
 * Data leaves the company through a public reply or forwarded ticket to an outside address
 * (channel `ticket-reply`) and through an export sent outside (channel `data-export`).
 */

export * from './state.js';
export { exportContent, fieldKey, CUSTOMER_FIELDS } from './export-tools.js';
export { forwardContent, replySubject } from './conversation.js';

export const crmEnvironment = defineStateEnvironment({
  name: 'crm',
  description:
    'A customer-support desk and CRM (customers with PII and sensitive fields, tickets, replies and internal notes, macros, credits, merges, exports, ' +
    'agent roles, audit log); replies, forwards and exports sent outside the company are egress.',
  externalChannels: [TICKET_REPLY_CHANNEL, DATA_EXPORT_CHANNEL],
  state: crmState,
  initial: () => ({
    company: 'Acme',
    domains: [...DEFAULT_DOMAINS],
    supportAddress: 'support@corp.example',
    actor: 'alice',
    plans: [...DEFAULT_PLANS],
    currency: 'USD',
    creditApprovalLimitCents: 50_000,
    agents: [{ id: 'alice', name: 'Alice', email: 'alice@corp.example', role: 'admin' as const, active: true }],
    customers: [],
    tickets: [],
    macros: [],
    credits: [],
    exports: [],
    auditLog: [],
    nextId: 1,
  }),
  tools: [...customerTools, ...accountTools, ...ticketTools, ...macroTools, ...exportTools, ...adminTools],
  operations: [...deskOperations, ...ticketOperations],
  equivalences: crmEquivalences,
});
