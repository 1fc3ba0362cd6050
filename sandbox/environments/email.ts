import { z } from 'zod';
import {
  defineOperation,
  defineStateEnvironment,
  defineTool,
  ToolError,
  type OperationSpec,
  type ToolContext,
  type ToolSpec,
} from '../environment.js';
import { DEFAULT_DOMAINS, isExternalAddress, normalizeAddress } from './shared/domains.js';

/**
 * A mailbox of one person in the organisation: inbox, sent mail, trash and contacts. Mail to an
 * address outside the organisation's domains leaves through the external channel `email`.
 */

export const EMAIL_CHANNEL = 'email';

export const emailAttachment = z.object({
  name: z.string(),
  content: z.string(),
});
export type EmailAttachment = z.infer<typeof emailAttachment>;

export const emailMessage = z.object({
  id: z.string(),
  from: z.string(),
  to: z.array(z.string()),
  cc: z.array(z.string()).default([]),
  subject: z.string(),
  body: z.string(),
  /** ISO 8601. */
  date: z.string(),
  read: z.boolean().default(false),
  attachments: z.array(emailAttachment).default([]),
});
export type EmailMessage = z.infer<typeof emailMessage>;

export const emailContact = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
});
export type EmailContact = z.infer<typeof emailContact>;

export const emailState = z.object({
  owner: z.string().default('alice@corp.example'),
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  inbox: z.array(emailMessage).default([]),
  sent: z.array(emailMessage).default([]),
  trash: z.array(emailMessage).default([]),
  contacts: z.array(emailContact).default([]),
  nextId: z.int().min(1).default(1),
});
export type EmailState = z.infer<typeof emailState>;

export const emailFolders = ['inbox', 'sent', 'trash'] as const;
export type EmailFolder = (typeof emailFolders)[number];

// ---------------------------------------------------------------------------------------------
// Helpers

const SNIPPET = 100;

function snippet(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET ? `${flat.slice(0, SNIPPET - 1)}…` : flat;
}

function summary(m: EmailMessage, folder?: EmailFolder) {
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

function newId(state: EmailState, prefix: string): string {
  const taken = allIds(state);
  let id: string;
  do id = `${prefix}-${state.nextId++}`;
  while (taken.has(id));
  return id;
}

/** Keeps generated ids clear of an explicit `m-7` given by the init script. */
function reserveId(state: EmailState, id: string): void {
  if (allIds(state).has(id)) throw new ToolError(`id "${id}" is already used`);
  const n = /^[a-z]+-(\d+)$/.exec(id);
  if (n && Number(n[1]) >= state.nextId) state.nextId = Number(n[1]) + 1;
}

function find(state: EmailState, id: string): { folder: EmailFolder; index: number; message: EmailMessage } {
  for (const folder of emailFolders) {
    const index = state[folder].findIndex((m) => m.id === id);
    if (index >= 0) return { folder, index, message: state[folder][index]! };
  }
  throw new ToolError(`no email with id "${id}"`);
}

function byDateDesc(messages: EmailMessage[]): EmailMessage[] {
  return messages
    .map((m, i) => ({ m, i }))
    .sort((a, b) => (a.m.date < b.m.date ? 1 : a.m.date > b.m.date ? -1 : b.i - a.i))
    .map((x) => x.m);
}

/** Addresses from `"a@x, b@y"`, `["a@x"]` or contact names; refuses anything that is not an address. */
function recipients(state: EmailState, value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(/[,;]/)).map((v) => v.trim()).filter(Boolean);
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

function bare(address: string): string {
  return normalizeAddress(address) ?? address.trim().toLowerCase();
}

/** Everything that leaves with a message: subject, body and every attachment. */
export function emailEgressContent(m: Pick<EmailMessage, 'subject' | 'body' | 'attachments'>): string {
  let content = `${m.subject}\n${m.body}`;
  for (const a of m.attachments) content += `\n[attachment ${a.name}]\n${a.content}`;
  return content;
}

/** Files the message in `sent` and reports one egress per recipient outside the organisation. */
function dispatch(state: EmailState, ctx: ToolContext, draft: Omit<EmailMessage, 'id' | 'from' | 'date' | 'read'>): EmailMessage {
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
  const seen = new Set<string>();
  for (const address of [...message.to, ...message.cc]) {
    if (seen.has(address)) continue;
    seen.add(address);
    if (isExternalAddress(address, state.domains)) ctx.egress({ channel: EMAIL_CHANNEL, destination: address, content });
  }
  return message;
}

function sentResult(m: EmailMessage) {
  return { id: m.id, status: 'sent', to: m.to, cc: m.cc, subject: m.subject };
}

function prefixed(prefix: string, subject: string): string {
  return subject.toLowerCase().startsWith(prefix.toLowerCase()) ? subject : `${prefix} ${subject}`;
}

// ---------------------------------------------------------------------------------------------
// Tools

const tool = <I extends z.ZodObject>(spec: ToolSpec<EmailState, I>) => defineTool(spec);
const operation = <I extends z.ZodObject>(spec: OperationSpec<EmailState, I>) => defineOperation(spec);

const recipientList = z.union([z.string(), z.array(z.string())]);
const attachmentsInput = z
  .array(
    z.object({
      name: z.string().min(1).describe('File name of the attachment, e.g. report.pdf'),
      content: z.string().describe('Text content of the attachment'),
    }),
  )
  .optional();

const emailTools: ToolSpec<EmailState>[] = [
  tool({
    name: 'list_emails',
    description: 'List emails in a mailbox folder, newest first, as short summaries.',
    input: z.object({
      folder: z.enum(emailFolders).optional().describe('Folder to list: inbox (default), sent or trash'),
      unread_only: z.boolean().optional().describe('Only unread emails (default false)'),
      limit: z.int().min(1).max(200).optional().describe('Maximum number of emails to return (default 20)'),
    }),
    handler(state, args) {
      const folder = args.folder ?? 'inbox';
      const all = byDateDesc(state[folder]).filter((m) => !args.unread_only || !m.read);
      const shown = all.slice(0, args.limit ?? 20);
      return { folder, total: all.length, emails: shown.map((m) => summary(m)) };
    },
  }),
  tool({
    name: 'read_email',
    description: 'Read one email in full (any folder) and mark it as read.',
    input: z.object({
      id: z.string().min(1).describe('Id of the email, as shown by list_emails or search_emails'),
    }),
    handler(state, args) {
      const { folder, message } = find(state, args.id);
      message.read = true;
      return {
        id: message.id,
        folder,
        from: message.from,
        to: message.to,
        cc: message.cc,
        subject: message.subject,
        date: message.date,
        body: message.body,
        attachments: message.attachments,
      };
    },
  }),
  tool({
    name: 'search_emails',
    description: 'Search all folders for emails whose subject, body or sender contains the query (case-insensitive).',
    input: z.object({
      query: z.string().min(1).describe('Text to look for in the subject, body or sender address'),
    }),
    handler(state, args) {
      const q = args.query.toLowerCase();
      const hits: Array<ReturnType<typeof summary>> = [];
      for (const folder of emailFolders) {
        for (const m of byDateDesc(state[folder])) {
          if ([m.subject, m.body, m.from].some((text) => text.toLowerCase().includes(q))) hits.push(summary(m, folder));
        }
      }
      return { query: args.query, count: hits.length, emails: hits };
    },
  }),
  tool({
    name: 'send_email',
    description: 'Send a new email from the mailbox owner to one or more recipients.',
    input: z.object({
      to: recipientList.describe('Recipient address, a list of addresses, or a contact name'),
      cc: recipientList.optional().describe('Carbon-copy recipients (addresses or contact names)'),
      subject: z.string().describe('Subject line'),
      body: z.string().describe('Plain-text body'),
      attachments: attachmentsInput.describe('Files to attach, each with a name and text content'),
    }),
    handler(state, args, ctx) {
      const message = dispatch(state, ctx, {
        to: recipients(state, args.to),
        cc: recipients(state, args.cc),
        subject: args.subject,
        body: args.body,
        attachments: (args.attachments ?? []).map((a) => ({ name: a.name, content: a.content })),
      });
      return sentResult(message);
    },
  }),
  tool({
    name: 'forward_email',
    description: 'Forward an existing email, with its attachments and an optional comment, to other recipients.',
    input: z.object({
      id: z.string().min(1).describe('Id of the email to forward'),
      to: recipientList.describe('Recipient address, a list of addresses, or a contact name'),
      comment: z.string().optional().describe('Text written above the forwarded message'),
    }),
    handler(state, args, ctx) {
      const { message: original } = find(state, args.id);
      const header = [
        '---------- Forwarded message ----------',
        `From: ${original.from}`,
        `Date: ${original.date}`,
        `Subject: ${original.subject}`,
        `To: ${original.to.join(', ')}`,
      ].join('\n');
      const body = `${args.comment ? `${args.comment}\n\n` : ''}${header}\n\n${original.body}`;
      const message = dispatch(state, ctx, {
        to: recipients(state, args.to),
        cc: [],
        subject: prefixed('Fwd:', original.subject),
        body,
        attachments: original.attachments.map((a) => ({ ...a })),
      });
      return { ...sentResult(message), forwarded: original.id };
    },
  }),
  tool({
    name: 'reply_email',
    description: 'Reply to the sender of an existing email.',
    input: z.object({
      id: z.string().min(1).describe('Id of the email to reply to'),
      body: z.string().describe('Plain-text body of the reply'),
    }),
    handler(state, args, ctx) {
      const { message: original } = find(state, args.id);
      // Replying to one's own sent mail goes to its recipients, as mail clients do.
      const to = bare(original.from) === bare(state.owner) ? original.to : [bare(original.from)];
      const message = dispatch(state, ctx, {
        to: recipients(state, to),
        cc: [],
        subject: prefixed('Re:', original.subject),
        body: args.body,
        attachments: [],
      });
      return { ...sentResult(message), inReplyTo: original.id };
    },
  }),
  tool({
    name: 'delete_email',
    description: 'Move an email to the trash; deleting an email that is already in the trash removes it for good.',
    input: z.object({
      id: z.string().min(1).describe('Id of the email to delete'),
    }),
    handler(state, args) {
      const { folder, index, message } = find(state, args.id);
      state[folder].splice(index, 1);
      if (folder === 'trash') return { id: message.id, status: 'deleted permanently' };
      state.trash.push(message);
      return { id: message.id, status: 'moved to trash', from: folder };
    },
  }),
  tool({
    name: 'list_contacts',
    description: 'List all contacts in the address book.',
    input: z.object({}),
    handler(state) {
      return { count: state.contacts.length, contacts: state.contacts.map((c) => ({ ...c })) };
    },
  }),
  tool({
    name: 'search_contacts',
    description: 'Find contacts whose name or email address contains the query (case-insensitive).',
    input: z.object({
      query: z.string().min(1).describe('Text to look for in contact names and addresses'),
    }),
    handler(state, args) {
      const q = args.query.toLowerCase();
      const contacts = state.contacts.filter((c) => c.name.toLowerCase().includes(q) || c.email.toLowerCase().includes(q));
      return { query: args.query, count: contacts.length, contacts: contacts.map((c) => ({ ...c })) };
    },
  }),
  tool({
    name: 'add_contact',
    description: 'Add a person to the address book.',
    input: z.object({
      name: z.string().min(1).describe('Full name of the contact'),
      email: z.string().min(3).describe('Email address of the contact'),
    }),
    handler(state, args) {
      return { ...addContact(state, args.name, args.email) };
    },
  }),
];

function addContact(state: EmailState, name: string, email: string, id?: string): EmailContact {
  const address = normalizeAddress(email);
  if (address === undefined) throw new ToolError(`not an email address: ${JSON.stringify(email)}`);
  const existing = state.contacts.find((c) => bare(c.email) === address);
  if (existing) throw new ToolError(`${address} is already a contact (${existing.id}, ${existing.name})`);
  if (id !== undefined) reserveId(state, id);
  const contact: EmailContact = { id: id ?? newId(state, 'c'), name, email: address };
  state.contacts.push(contact);
  return contact;
}

// ---------------------------------------------------------------------------------------------
// Operations

const seededMessage = {
  cc: recipientList.optional().describe('Carbon-copy recipients'),
  subject: z.string().describe('Subject line'),
  body: z.string().describe('Plain-text body'),
  date: z.string().optional().describe('ISO 8601 date (default: now)'),
  id: z.string().min(1).optional().describe('Stable id for verifiers and witnesses (default m-<n>)'),
  attachments: attachmentsInput.describe('Attachments, each with a name and text content'),
};

function seed(state: EmailState, folder: 'inbox' | 'sent', m: Omit<EmailMessage, 'id'> & { id?: string }): void {
  if (m.id !== undefined) reserveId(state, m.id);
  state[folder].push({ ...m, id: m.id ?? newId(state, 'm') });
}

function seedDate(date: string | undefined): string {
  if (date === undefined) return new Date().toISOString();
  const parsed = new Date(date);
  if (Number.isNaN(parsed.getTime())) throw new ToolError(`not a date: ${JSON.stringify(date)}`);
  return parsed.toISOString();
}

const emailOperations: OperationSpec<EmailState>[] = [
  operation({
    name: 'configure',
    description: 'Set the mailbox owner and the organisation domains (mail to other domains is egress).',
    input: z.object({
      owner: z.string().optional().describe('Address of the mailbox owner (default alice@corp.example)'),
      domains: z.array(z.string().min(1)).optional().describe('Organisation domains (default ["corp.example"])'),
    }),
    apply(state, args) {
      if (args.owner !== undefined) {
        const owner = normalizeAddress(args.owner);
        if (owner === undefined) throw new ToolError(`not an email address: ${JSON.stringify(args.owner)}`);
        state.owner = owner;
      }
      if (args.domains !== undefined) state.domains = args.domains.map((d) => d.toLowerCase());
    },
  }),
  operation({
    name: 'deliver',
    description: 'Put a received email into the inbox.',
    input: z.object({
      from: z.string().min(1).describe('Sender address'),
      to: recipientList.optional().describe('Recipients (default: the mailbox owner)'),
      read: z.boolean().optional().describe('Whether it was already read (default false)'),
      ...seededMessage,
    }),
    apply(state, args) {
      seed(state, 'inbox', {
        id: args.id,
        from: args.from,
        to: args.to === undefined ? [state.owner] : recipients(state, args.to),
        cc: recipients(state, args.cc),
        subject: args.subject,
        body: args.body,
        date: seedDate(args.date),
        read: args.read ?? false,
        attachments: (args.attachments ?? []).map((a) => ({ name: a.name, content: a.content })),
      });
    },
  }),
  operation({
    name: 'add_sent',
    description: 'Put an email the owner sent earlier into the sent folder (no egress: it happened before the run).',
    input: z.object({
      to: recipientList.describe('Recipients'),
      from: z.string().optional().describe('Sender (default: the mailbox owner)'),
      ...seededMessage,
    }),
    apply(state, args) {
      seed(state, 'sent', {
        id: args.id,
        from: args.from ?? state.owner,
        to: recipients(state, args.to),
        cc: recipients(state, args.cc),
        subject: args.subject,
        body: args.body,
        date: seedDate(args.date),
        read: true,
        attachments: (args.attachments ?? []).map((a) => ({ name: a.name, content: a.content })),
      });
    },
  }),
  operation({
    name: 'add_contact',
    description: 'Add a person to the address book.',
    input: z.object({
      name: z.string().min(1).describe('Full name'),
      email: z.string().min(3).describe('Email address'),
      id: z.string().min(1).optional().describe('Stable id (default c-<n>)'),
    }),
    apply(state, args) {
      addContact(state, args.name, args.email, args.id);
    },
  }),
];

export const emailEnvironment = defineStateEnvironment({
  name: 'email',
  description: "One person's mailbox (inbox, sent, trash, contacts); mail to addresses outside the organisation's domains is egress.",
  externalChannels: [EMAIL_CHANNEL],
  state: emailState,
  initial: () => ({
    owner: 'alice@corp.example',
    domains: [...DEFAULT_DOMAINS],
    inbox: [],
    sent: [],
    trash: [],
    contacts: [],
    nextId: 1,
  }),
  tools: emailTools,
  operations: emailOperations,
});
