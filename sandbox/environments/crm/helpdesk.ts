import { z } from 'zod';
import { ToolError } from '../../environment.js';
import { normalizeAddress } from '../shared/domains.js';
import { claimId, nextSerialId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import type { CrmState, Customer, Macro, SupportAgent, Ticket } from './state.js';

/** Lookups and rules every part of the support desk shares: ids, addresses, the acting agent, the audit log. */

export const { tool, operation } = specBuilders<CrmState>();

export const customerArg = z.string().min(1).describe('Customer id (e.g. cus-12), primary email address or exact account name');
export const ticketArg = z.string().min(1).describe('Ticket id, e.g. tkt-1042 (or just 1042)');

function allIds(state: CrmState): Set<string> {
  const ids: string[] = [];
  for (const c of state.customers) ids.push(c.id, ...c.contacts.map((p) => p.id));
  for (const t of state.tickets) ids.push(t.id, ...t.comments.map((m) => m.id), ...t.forwards.map((f) => f.id));
  for (const m of state.macros) ids.push(m.id);
  for (const c of state.credits) ids.push(c.id);
  return new Set(ids);
}

/** The next free `<prefix>-<n>` (or `explicit`, reserved), never colliding with any id in the desk. */
export function newId(state: CrmState, prefix: string, explicit?: string): string {
  return claimId(state, prefix, allIds(state), explicit);
}

/**
 * The bare address in `Name <user@host>` or `user@host`, with its case kept (a canary in an
 * address must survive); a ToolError when it is not an address.
 */
export function bareAddress(text: string, field = 'email'): string {
  if (normalizeAddress(text) === undefined) throw new ToolError(`${field} is not an email address: ${JSON.stringify(text)}`);
  const angle = /<([^<>]*)>\s*$/.exec(text.trim());
  return (angle ? angle[1]! : text).trim().replace(/^mailto:/i, '');
}

export function sameAddress(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** Distinct addresses (case-insensitively), first spelling kept, in order. */
export function distinctAddresses(addresses: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of addresses) if (!out.some((o) => sameAddress(o, a))) out.push(a);
  return out;
}

export function money(cents: number, currency: string): string {
  return `${Math.floor(cents / 100).toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')} ${currency}`;
}

export function now(): string {
  return new Date().toISOString();
}

// ---------------------------------------------------------------------------------------------
// Who acts, and what they may do

export function actingAgent(state: CrmState): SupportAgent {
  const me = state.agents.find((a) => a.id === state.actor);
  if (!me) throw new ToolError(`your support account "${state.actor}" does not exist`);
  if (!me.active) throw new ToolError(`your support account "${me.id}" is deactivated`);
  return me;
}

/** The acting agent when they are an admin; a ToolError saying who may, otherwise. */
export function requireAdmin(state: CrmState, what: string): SupportAgent {
  const me = actingAgent(state);
  if (me.role !== 'admin') throw new ToolError(`only admins can ${what} (your role is ${me.role})`);
  return me;
}

export function getAgent(state: CrmState, ref: string): SupportAgent {
  const r = ref.trim().replace(/^@/, '').toLowerCase();
  const found = state.agents.find((a) => a.id.toLowerCase() === r) ?? state.agents.find((a) => sameAddress(a.email, r));
  if (!found) throw new ToolError(`no support agent "${ref}" (agents: ${state.agents.map((a) => a.id).join(', ') || 'none'})`);
  return found;
}

/** Appends to the audit log: who (the acting agent unless `actor`), did what, to which id. */
export function audit(state: CrmState, action: string, target: string, details: Record<string, string> = {}, actor = state.actor, date = now()): void {
  state.auditLog.push({ id: nextSerialId(state.auditLog, 'audit'), date, actor, action, target, details });
}

// ---------------------------------------------------------------------------------------------
// Customers, tickets, macros

export function getCustomer(state: CrmState, ref: string): Customer {
  const r = ref.trim();
  const lower = r.toLowerCase();
  const found =
    state.customers.find((c) => c.id.toLowerCase() === lower) ??
    state.customers.find((c) => sameAddress(c.email, r)) ??
    state.customers.find((c) => c.name.toLowerCase() === lower) ??
    state.customers.find((c) => c.contacts.some((p) => sameAddress(p.email, r)));
  if (!found) throw new ToolError(`no customer "${ref}" (use search_customers)`);
  return found;
}

/** The customer whose primary or contact address is `address`, if any (links a requester to an account). */
export function customerOfAddress(state: CrmState, address: string): Customer | undefined {
  return state.customers.find((c) => sameAddress(c.email, address)) ?? state.customers.find((c) => c.contacts.some((p) => sameAddress(p.email, address)));
}

export function getTicket(state: CrmState, ref: string): Ticket {
  const r = ref.trim().replace(/^#/, '').toLowerCase();
  const found = state.tickets.find((t) => t.id.toLowerCase() === r) ?? (/^\d+$/.test(r) ? state.tickets.find((t) => t.id === `tkt-${r}`) : undefined);
  if (!found) throw new ToolError(`no ticket "${ref}"`);
  return found;
}

/** Closed tickets are read-only, as in the helpdesks this models. */
export function requireChangeable(t: Ticket): void {
  if (t.status === 'closed') throw new ToolError(`ticket ${t.id} is closed; closed tickets cannot be changed`);
}

export function getMacro(state: CrmState, ref: string): Macro {
  const r = ref.trim().toLowerCase();
  const found = state.macros.find((m) => m.id.toLowerCase() === r) ?? state.macros.find((m) => m.title.toLowerCase() === r);
  if (!found) throw new ToolError(`no macro "${ref}" (use list_macros)`);
  return found;
}

export function requirePlan(state: CrmState, plan: string): string {
  const found = state.plans.find((p) => p.toLowerCase() === plan.trim().toLowerCase());
  if (!found) throw new ToolError(`unknown plan "${plan}" (plans: ${state.plans.join(', ')})`);
  return found;
}

/** Tags as helpdesks store them: trimmed, lower-case, spaces as underscores. */
export function cleanTag(tag: string): string {
  return tag.trim().toLowerCase().replace(/\s+/g, '_');
}

export function addTags(into: string[], tags: readonly string[]): void {
  for (const tag of tags.map(cleanTag)) if (tag && !into.includes(tag)) into.push(tag);
}
