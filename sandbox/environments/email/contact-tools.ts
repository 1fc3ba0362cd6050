import { z } from 'zod';
import type { ToolSpec } from '../../environment.js';
import { matchesQuery } from '../shared/collections.js';
import { addContact, tool } from './mailbox.js';
import type { EmailState } from './state.js';

/** The address book. */
export const contactTools: ToolSpec<EmailState>[] = [
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
      const contacts = state.contacts.filter((c) => matchesQuery(args.query, c.name, c.email));
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
