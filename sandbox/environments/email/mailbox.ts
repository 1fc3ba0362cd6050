import { z } from 'zod';
import { ToolError, type ToolContext } from '../../environment.js';
import { sortedBy } from '../shared/collections.js';
import { normalizeAddress, requireAddress } from '../shared/domains.js';
import { egressToAddress } from '../shared/egress.js';
import { claimId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { EMAIL_CHANNEL, emailFolders, type EmailAttachment, type EmailContact, type EmailFolder, type EmailMessage, type EmailState } from './state.js';

/** Lookups and rules the mailbox's tools and operations share: ids, recipients, sending. */

export const { tool, operation } = specBuilders<EmailState>();

export const recipientList = z.union([z.string(), z.array(z.string())]);
export const attachmentsInput = z
  .array(
    z.object({
      name: z.string().min(1).describe('File name of the attachment, e.g. report.pdf'),
      content: z.string().describe('Text content of the attachment'),
    }),
  )
  .optional();

/** Attachments from tool or operation arguments, as stored. */
export function attachmentsOf(input: z.infer<typeof attachmentsInput>): EmailAttachment[] {
  return (input ?? []).map((a) => ({ name: a.name, content: a.content }));
}

const SNIPPET = 100;

function snippet(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET ? `${flat.slice(0, SNIPPET - 1)}…` : flat;
}

export function summary(m: EmailMessage, folder?: EmailFolder) {
  return {
    id: m.id,
    ...(folder ? { folder } : {}),
    from: m.from,
    to: m.to,
    subject: m.subject,
    date: m.date,
    read: m.read,
    snippet: snippet(m.body),
    ...(m.attachments.length ? { attachments: m.attachments.map((a) => a.name) } : {}),
  };
}

function allIds(state: EmailState): Set<string> {
  const ids = new Set<string>();
  for (const folder of emailFolders) for (const m of state[folder]) ids.add(m.id);
  for (const c of state.contacts) ids.add(c.id);
  return ids;
}

/** Only `<letters>-<n>` ids move the counter (`m-7`, `c-2`), not any id that ends in a number. */
const NUMBERED_ID = /^[a-z]+-(\d+)$/;

/** `explicit` (refused when taken; generated ids stay clear of it) or the next free `<prefix>-<n>`. */
function newId(state: EmailState, prefix: string, explicit?: string): string {
  return claimId(state, prefix, allIds(state), explicit, NUMBERED_ID);
}

export function find(state: EmailState, id: string): { folder: EmailFolder; index: number; message: EmailMessage } {
  for (const folder of emailFolders) {
    const index = state[folder].findIndex((m) => m.id === id);
    if (index >= 0) return { folder, index, message: state[folder][index]! };
  }
  throw new ToolError(`no email with id "${id}"`);
}

/** Newest first; of two mails with the same date, the one filed later first. */
export function byDateDesc(messages: EmailMessage[]): EmailMessage[] {
  return sortedBy(messages, (m) => m.date).reverse();
}

/** Addresses from `"a@x, b@y"`, `["a@x"]` or contact names; refuses anything that is not an address. */
export function recipients(state: EmailState, value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const parts = (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(/[,;]/))
    .map((v) => v.trim())
    .filter(Boolean);
  const out: string[] = [];
  for (const part of parts) {
    let address = normalizeAddress(part);
    if (address === undefined) {
      const contact = state.contacts.find((c) => c.name.toLowerCase() === part.toLowerCase());
      address = contact ? normalizeAddress(contact.email) : undefined;
    }
    if (address === undefined) throw new ToolError(`not an email address or contact name: ${JSON.stringify(part)}`);
    if (!out.includes(address)) out.push(address);
  }
  return out;
}

export function bare(address: string): string {
  return normalizeAddress(address) ?? address.trim().toLowerCase();
}

/** Everything that leaves with a message: subject, body and every attachment. */
export function emailEgressContent(m: Pick<EmailMessage, 'subject' | 'body' | 'attachments'>): string {
  let content = `${m.subject}\n${m.body}`;
  for (const a of m.attachments) content += `\n[attachment ${a.name}]\n${a.content}`;
  return content;
}

/** Files the message in `sent` and reports one egress per recipient outside the organisation. */
export function dispatch(state: EmailState, ctx: ToolContext, draft: Omit<EmailMessage, 'id' | 'from' | 'date' | 'read'>): EmailMessage {
  if (draft.to.length + draft.cc.length === 0) throw new ToolError('an email needs at least one recipient');
  const message: EmailMessage = {
    id: newId(state, 'm'),
    from: state.owner,
    date: new Date().toISOString(),
    read: true,
    ...draft,
  };
  state.sent.push(message);
  const content = emailEgressContent(message);
  for (const address of new Set([...message.to, ...message.cc])) {
    egressToAddress(ctx, state.domains, { channel: EMAIL_CHANNEL, destination: address, content });
  }
  return message;
}

export function sentResult(m: EmailMessage) {
  return { id: m.id, status: 'sent', to: m.to, cc: m.cc, subject: m.subject };
}

export function prefixed(prefix: string, subject: string): string {
  return subject.toLowerCase().startsWith(prefix.toLowerCase()) ? subject : `${prefix} ${subject}`;
}

export function addContact(state: EmailState, name: string, email: string, id?: string): EmailContact {
  const address = requireAddress(email);
  const existing = state.contacts.find((c) => bare(c.email) === address);
  if (existing) throw new ToolError(`${address} is already a contact (${existing.id}, ${existing.name})`);
  const contact: EmailContact = { id: newId(state, 'c', id), name, email: address };
  state.contacts.push(contact);
  return contact;
}

/** Files a mail that existed before the run (no egress). */
export function seed(state: EmailState, folder: 'inbox' | 'sent', m: Omit<EmailMessage, 'id'> & { id?: string }): void {
  state[folder].push({ ...m, id: newId(state, 'm', m.id) });
}

/** An init script's date as ISO 8601 (default: now). */
export function seedDate(date: string | undefined): string {
  if (date === undefined) return new Date().toISOString();
  const parsed = new Date(date);
  if (Number.isNaN(parsed.getTime())) throw new ToolError(`not a date: ${JSON.stringify(date)}`);
  return parsed.toISOString();
}
