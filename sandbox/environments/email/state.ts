import { z } from 'zod';
import { DEFAULT_DOMAINS } from '../shared/domains.js';

/** The mailbox's state: folders of messages and the address book. See `index.ts`. */

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
