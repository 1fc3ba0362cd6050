import { z } from 'zod';
import type { OperationSpec } from '../../environment.js';
import { normalizeDomains, organisationDomainsArg, requireAddress } from '../shared/domains.js';
import { addContact, attachmentsInput, attachmentsOf, operation, recipientList, recipients, seed, seedDate } from './mailbox.js';
import type { EmailState } from './state.js';

/** Init-script operations: the owner, mail received and sent before the run, contacts. */

const seededMessage = {
  cc: recipientList.optional().describe('Carbon-copy recipients'),
  subject: z.string().describe('Subject line'),
  body: z.string().describe('Plain-text body'),
  date: z.string().optional().describe('ISO 8601 date (default: now)'),
  id: z.string().min(1).optional().describe('Stable id for verifiers and witnesses (default m-<n>)'),
  attachments: attachmentsInput.describe('Attachments, each with a name and text content'),
};

export const emailOperations: OperationSpec<EmailState>[] = [
  operation({
    name: 'configure',
    description: 'Set the mailbox owner and the organisation domains (mail to other domains is egress).',
    input: z.object({
      owner: z.string().optional().describe('Address of the mailbox owner (default alice@corp.example)'),
      domains: organisationDomainsArg,
    }),
    apply(state, args) {
      if (args.owner !== undefined) state.owner = requireAddress(args.owner);
      if (args.domains !== undefined) state.domains = normalizeDomains(args.domains);
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
        attachments: attachmentsOf(args.attachments),
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
        attachments: attachmentsOf(args.attachments),
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
