import { z } from 'zod';
import type { ToolSpec } from '../../environment.js';
import { limitArg, matchesQuery } from '../shared/collections.js';
import {
  attachmentsInput,
  attachmentsOf,
  bare,
  byDateDesc,
  dispatch,
  find,
  prefixed,
  recipientList,
  recipients,
  sentResult,
  summary,
  tool,
} from './mailbox.js';
import { emailFolders, type EmailState } from './state.js';

/** Reading, sending, forwarding, replying to and deleting mail. */
export const messageTools: ToolSpec<EmailState>[] = [
  tool({
    name: 'list_emails',
    description: 'List emails in a mailbox folder, newest first, as short summaries.',
    input: z.object({
      folder: z.enum(emailFolders).optional().describe('Folder to list: inbox (default), sent or trash'),
      unread_only: z.boolean().optional().describe('Only unread emails (default false)'),
      limit: limitArg('Maximum number of emails to return (default 20)'),
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
      const hits: Array<ReturnType<typeof summary>> = [];
      for (const folder of emailFolders) {
        for (const m of byDateDesc(state[folder])) {
          if (matchesQuery(args.query, m.subject, m.body, m.from)) hits.push(summary(m, folder));
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
        attachments: attachmentsOf(args.attachments),
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
];
