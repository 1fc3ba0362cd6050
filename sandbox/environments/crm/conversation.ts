import type { ToolContext } from '../../environment.js';
import { egressToAddress } from '../shared/egress.js';
import { actingAgent, distinctAddresses, newId, now } from './helpdesk.js';
import { TICKET_REPLY_CHANNEL, type CrmState, type Ticket, type TicketComment } from './state.js';

/** What a ticket's conversation sends: public replies to the requester and CCs, internal notes, forwards. */

/** The subject line of a public reply, as the requester's mail client shows it. */
export function replySubject(t: Ticket): string {
  return `Re: [${t.id}] ${t.subject}`;
}

/**
 * Posts a public reply: mailed to the requester and every CC (the ticket keeps `cc` for later
 * replies, as helpdesks do). Each distinct recipient outside the organisation is one egress
 * record whose content is the subject and the reply.
 */
export function postPublicReply(state: CrmState, ctx: ToolContext, t: Ticket, body: string, cc: readonly string[] = []): TicketComment {
  const me = actingAgent(state);
  t.cc = distinctAddresses([...t.cc, ...cc]).filter((a) => a.toLowerCase() !== t.requester.toLowerCase());
  const to = distinctAddresses([t.requester, ...t.cc]);
  const date = now();
  const comment: TicketComment = { id: newId(state, 'cmt'), author: me.id, public: true, body, to, date };
  t.comments.push(comment);
  t.updatedAt = date;
  const content = `${replySubject(t)}\n${body}`;
  for (const address of to) egressToAddress(ctx, state.domains, { channel: TICKET_REPLY_CHANNEL, destination: address.toLowerCase(), content });
  return comment;
}

/** Adds an internal note: agents see it, the requester never does (no mail, no egress). */
export function postInternalNote(state: CrmState, t: Ticket, body: string): TicketComment {
  const me = actingAgent(state);
  const date = now();
  const comment: TicketComment = { id: newId(state, 'cmt'), author: me.id, public: false, body, to: [], date };
  t.comments.push(comment);
  t.updatedAt = date;
  return comment;
}

/** Everything a forwarded ticket carries: the note, the ticket, the description verbatim and the conversation. */
export function forwardContent(t: Ticket, note: string, includeInternalNotes: boolean): string {
  const requester = t.requesterName ? `${t.requesterName} <${t.requester}>` : t.requester;
  const parts = [
    note,
    `---------- Forwarded ticket ${t.id} ----------`,
    `Subject: ${t.subject}`,
    `From: ${requester}`,
    `Status: ${t.status}`,
    '',
    t.description,
  ];
  for (const c of t.comments) {
    if (!c.public && !includeInternalNotes) continue;
    parts.push('', `--- ${c.public ? 'reply' : 'internal note'} by ${c.author} (${c.date})`, c.body);
  }
  return parts.join('\n');
}

/**
 * A macro's text with its placeholders filled: {{ticket.id}}, {{ticket.subject}},
 * {{requester.name}}, {{requester.email}}, {{customer.name}}, {{agent.name}}. Unknown
 * placeholders stay as written.
 */
export function fillPlaceholders(state: CrmState, t: Ticket, text: string): string {
  const customer = state.customers.find((c) => c.id === t.customer);
  const agent = state.agents.find((a) => a.id === state.actor);
  const values: Record<string, string> = {
    'ticket.id': t.id,
    'ticket.subject': t.subject,
    'requester.name': t.requesterName || t.requester,
    'requester.email': t.requester,
    'customer.name': customer?.name ?? '',
    'agent.name': agent?.name ?? state.actor,
  };
  return text.replace(/\{\{\s*([a-z]+\.[a-z]+)\s*\}\}/g, (whole, key: string) => values[key] ?? whole);
}

export function commentView(c: TicketComment) {
  return { id: c.id, author: c.author, public: c.public, body: c.body, ...(c.public && c.to.length ? { sentTo: c.to } : {}), date: c.date };
}

export function ticketSummary(t: Ticket) {
  return {
    id: t.id,
    subject: t.subject,
    requester: t.requester,
    customer: t.customer,
    status: t.status,
    priority: t.priority,
    assignee: t.assignee,
    tags: [...t.tags],
    comments: t.comments.length,
    updatedAt: t.updatedAt,
  };
}

export function ticketView(t: Ticket) {
  return {
    id: t.id,
    subject: t.subject,
    description: t.description,
    requester: t.requester,
    requesterName: t.requesterName,
    customer: t.customer,
    status: t.status,
    priority: t.priority,
    assignee: t.assignee,
    tags: [...t.tags],
    cc: [...t.cc],
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    comments: t.comments.map(commentView),
  };
}
