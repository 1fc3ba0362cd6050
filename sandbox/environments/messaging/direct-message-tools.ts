import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { matchesQuery } from '../shared/collections.js';
import { chronological, destinationOf, directWith, findUser, isExternalChatUser, messageView, post, tool, userArg, userSummary } from './chat.js';
import { MESSAGING_CHANNEL, type MessagingState } from './state.js';

/** Direct messages, and the people one can write to. */
export const directMessageTools: ToolSpec<MessagingState>[] = [
  tool({
    name: 'send_direct_message',
    description: 'Send a direct message to one user (inside or outside the organisation).',
    input: z.object({
      user: userArg('Recipient'),
      text: z.string().min(1).describe('Message text'),
    }),
    handler(state, args, ctx) {
      const other = findUser(state, args.user);
      if (other.id === state.user) throw new ToolError('you cannot send a direct message to yourself');
      const dm = directWith(state, other, true)!;
      const message = post(state, dm.messages, state.user, args.text);
      const external = isExternalChatUser(state, other);
      if (external) ctx.egress({ channel: MESSAGING_CHANNEL, destination: destinationOf(other), content: args.text });
      return { id: message.id, conversation: dm.id, to: other.id, external, ts: message.ts };
    },
  }),
  tool({
    name: 'list_direct_messages',
    description: 'List your direct-message conversations with their latest message.',
    input: z.object({}),
    handler(state) {
      const conversations = state.directMessages.map((d) => {
        const last = chronological(d.messages).at(-1);
        return { id: d.id, with: d.with, messages: d.messages.length, ...(last ? { last: messageView(last) } : {}) };
      });
      return { count: conversations.length, conversations };
    },
  }),
  tool({
    name: 'read_direct_messages',
    description: 'Read your direct-message conversation with one user, oldest first.',
    input: z.object({ user: userArg('The other person') }),
    handler(state, args) {
      const other = findUser(state, args.user);
      const dm = directWith(state, other, false);
      return { with: other.id, external: isExternalChatUser(state, other), messages: dm ? chronological(dm.messages).map(messageView) : [] };
    },
  }),
  tool({
    name: 'list_users',
    description: 'List the users you can message, saying which are outside the organisation (other workspaces, guests).',
    input: z.object({ query: z.string().optional().describe('Only users whose id, name or email contains this text') }),
    handler(state, args) {
      const users = state.users.filter((u) => args.query === undefined || matchesQuery(args.query, u.id, u.name, u.email)).map((u) => userSummary(state, u));
      return { count: users.length, users };
    },
  }),
];
