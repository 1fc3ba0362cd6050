import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { normalizeDomains } from '../shared/domains.js';
import { addUser, channelName, directWith, ensureUser, findUser, newId, operation, post } from './chat.js';
import type { MessagingState } from './state.js';

/** Init-script operations: the acting user and workspace, users, channels, and what was said before the run. */
export const messagingOperations: OperationSpec<MessagingState>[] = [
  operation({
    name: 'configure',
    description: "Set the acting user, the organisation's workspace name and its email domains.",
    input: z.object({
      user: z.string().min(1).optional().describe('User id the agent acts as (default alice; created if missing)'),
      workspace: z.string().min(1).optional().describe("The organisation's workspace (default acme)"),
      domains: z.array(z.string().min(1)).optional().describe('Organisation email domains (default ["corp.example"])'),
    }),
    apply(state, args) {
      if (args.workspace !== undefined) {
        const previous = state.workspace;
        state.workspace = args.workspace;
        for (const u of state.users) if (u.workspace === previous) u.workspace = args.workspace;
      }
      if (args.domains !== undefined) state.domains = normalizeDomains(args.domains);
      if (args.user !== undefined) {
        state.user = args.user.replace(/^@/, '');
        ensureUser(state, state.user);
      }
    },
  }),
  operation({
    name: 'add_user',
    description: 'Add a user account: a member of the organisation, a guest, or someone from another workspace.',
    input: z.object({
      id: z.string().min(1).describe('Handle, e.g. bob'),
      name: z.string().optional().describe('Display name (default: the id)'),
      email: z.string().optional().describe('Email address'),
      workspace: z.string().optional().describe("Workspace the account belongs to (default: the organisation's, or the email's domain when it is outside)"),
      guest: z.boolean().optional().describe('A guest account: external even in the organisation workspace (default false)'),
    }),
    apply(state, args) {
      addUser(state, args);
    },
  }),
  operation({
    name: 'add_channel',
    description: 'Create a channel with members and, for Slack Connect channels, the workspaces it is shared with.',
    input: z.object({
      name: z.string().min(1).describe('Channel name'),
      id: z.string().min(1).optional().describe('Stable id (default C-<n>)'),
      private: z.boolean().optional().describe('Private channel (default false)'),
      topic: z.string().optional().describe('Topic'),
      members: z.array(z.string().min(1)).optional().describe('Member user ids (the acting user is not added implicitly)'),
      shared_with: z.array(z.string().min(1)).optional().describe('Other workspaces the channel is shared with'),
    }),
    apply(state, args) {
      const name = channelName(args.name);
      if (state.channels.some((c) => c.name === name)) throw new ToolError(`channel #${name} already exists`);
      const members = (args.members ?? []).map((m) => findUser(state, m).id);
      state.channels.push({
        id: newId(state, 'C', args.id),
        name,
        private: args.private ?? false,
        topic: args.topic ?? '',
        members: [...new Set(members)],
        sharedWith: [...(args.shared_with ?? [])],
        messages: [],
      });
    },
  }),
  operation({
    name: 'post',
    description: 'Add a message to a channel, as any user (no egress: it was said before the run).',
    input: z.object({
      channel: z.string().min(1).describe('Channel name or id (private channels too)'),
      user: z.string().min(1).describe('Author user id'),
      text: z.string().describe('Message text'),
      id: z.string().min(1).optional().describe('Stable id (default msg-<n>)'),
      ts: z.string().optional().describe('ISO 8601 time (default now)'),
      thread_of: z.string().optional().describe('Id of the message this replies to'),
    }),
    apply(state, args) {
      const r = args.channel.replace(/^#/, '').toLowerCase();
      const channel = state.channels.find((c) => c.id.toLowerCase() === r || c.name === r);
      if (!channel) throw new ToolError(`no channel "${args.channel}"`);
      const author = findUser(state, args.user);
      post(state, channel.messages, author.id, args.text, {
        ...(args.id !== undefined ? { id: args.id } : {}),
        ...(args.ts !== undefined ? { ts: args.ts } : {}),
        ...(args.thread_of !== undefined ? { threadOf: args.thread_of } : {}),
      });
    },
  }),
  operation({
    name: 'add_direct_message',
    description: 'Add a message to the direct conversation between the acting user and another user.',
    input: z.object({
      with: z.string().min(1).describe('The other person (user id or email)'),
      from: z.string().optional().describe('Author: the other person (default) or the acting user'),
      text: z.string().describe('Message text'),
      id: z.string().min(1).optional().describe('Stable message id (default msg-<n>)'),
      ts: z.string().optional().describe('ISO 8601 time (default now)'),
    }),
    apply(state, args) {
      const other = findUser(state, args.with);
      const author = args.from === undefined ? other : findUser(state, args.from);
      if (author.id !== other.id && author.id !== state.user) throw new ToolError(`${author.id} is not part of the conversation with ${other.id}`);
      const dm = directWith(state, other, true)!;
      post(state, dm.messages, author.id, args.text, { ...(args.id !== undefined ? { id: args.id } : {}), ...(args.ts !== undefined ? { ts: args.ts } : {}) });
    },
  }),
];
