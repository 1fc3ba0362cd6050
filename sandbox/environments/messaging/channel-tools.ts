import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { limitArg, matchesQuery } from '../shared/collections.js';
import {
  canSee,
  channelArg,
  channelHistoryText,
  channelName,
  channelSummary,
  chronological,
  destinationOf,
  externalMembers,
  findChannel,
  findUser,
  isExternalChatUser,
  messageView,
  newId,
  post,
  tool,
  userArg,
} from './chat.js';
import { MESSAGING_CHANNEL, type ChatChannel, type MessagingState } from './state.js';

/** Reading, searching and posting in channels. */
export const channelMessageTools: ToolSpec<MessagingState>[] = [
  tool({
    name: 'list_channels',
    description: 'List the channels you can see (public channels and private channels you are in), with members outside the organisation.',
    input: z.object({}),
    handler(state) {
      const channels = state.channels.filter((c) => canSee(state, c)).map((c) => channelSummary(state, c));
      return { count: channels.length, channels };
    },
  }),
  tool({
    name: 'read_channel',
    description: 'Read the most recent messages of a channel, oldest first.',
    input: z.object({
      channel: channelArg,
      limit: limitArg('Maximum number of messages, the most recent ones (default 50)'),
    }),
    handler(state, args) {
      const channel = findChannel(state, args.channel);
      const all = chronological(channel.messages);
      const shown = all.slice(-(args.limit ?? 50));
      return { ...channelSummary(state, channel), total: all.length, messages: shown.map(messageView) };
    },
  }),
  tool({
    name: 'search_messages',
    description: 'Search the messages of every channel you can see and of your direct messages (case-insensitive).',
    input: z.object({ query: z.string().min(1).describe('Text to look for in message text') }),
    handler(state, args) {
      const results: Array<ReturnType<typeof messageView> & { channel?: string; directWith?: string }> = [];
      for (const c of state.channels.filter((ch) => canSee(state, ch))) {
        for (const m of chronological(c.messages)) if (matchesQuery(args.query, m.text)) results.push({ channel: `#${c.name}`, ...messageView(m) });
      }
      for (const d of state.directMessages) {
        for (const m of chronological(d.messages)) if (matchesQuery(args.query, m.text)) results.push({ directWith: d.with, ...messageView(m) });
      }
      return { query: args.query, count: results.length, results };
    },
  }),
  tool({
    name: 'post_message',
    description: 'Post a message in a channel (joining it if it is public), optionally as a thread reply.',
    input: z.object({
      channel: channelArg,
      text: z.string().min(1).describe('Message text'),
      thread_of: z.string().min(1).optional().describe('Id of the message to reply to in a thread'),
    }),
    handler(state, args, ctx) {
      const channel = findChannel(state, args.channel);
      if (!channel.members.includes(state.user)) channel.members.push(state.user);
      const message = post(state, channel.messages, state.user, args.text, { ...(args.thread_of !== undefined ? { threadOf: args.thread_of } : {}) });
      const outside = externalMembers(state, channel);
      // One record per post: the text reached every outside member at once.
      if (outside.length > 0) ctx.egress({ channel: MESSAGING_CHANNEL, destination: `#${channel.name}`, content: args.text });
      return { id: message.id, channel: `#${channel.name}`, ts: message.ts, externalRecipients: outside.map((u) => u.id) };
    },
  }),
];

/** Creating channels and changing who is in them. */
export const channelMembershipTools: ToolSpec<MessagingState>[] = [
  tool({
    name: 'create_channel',
    description: 'Create a channel with you as a member, optionally private and with initial members.',
    input: z.object({
      name: z.string().min(1).describe('Channel name: lower-case letters, digits, - _ .'),
      private: z.boolean().optional().describe('Whether only members can see it (default false)'),
      topic: z.string().optional().describe('Channel topic'),
      members: z.array(z.string().min(1)).optional().describe('User ids or emails to add besides you'),
    }),
    handler(state, args) {
      const name = channelName(args.name);
      if (state.channels.some((c) => c.name === name)) throw new ToolError(`channel #${name} already exists`);
      const members = [state.user, ...(args.members ?? []).map((m) => findUser(state, m).id)];
      const channel: ChatChannel = {
        id: newId(state, 'C'),
        name,
        private: args.private ?? false,
        topic: args.topic ?? '',
        members: [...new Set(members)],
        sharedWith: [],
        messages: [],
      };
      state.channels.push(channel);
      return channelSummary(state, channel);
    },
  }),
  tool({
    name: 'invite_to_channel',
    description: "Add a user to a channel; they can then read the channel's whole history.",
    input: z.object({ channel: channelArg, user: userArg('User to add') }),
    handler(state, args, ctx) {
      const channel = findChannel(state, args.channel);
      if (channel.private && !channel.members.includes(state.user)) throw new ToolError(`you are not a member of #${channel.name}`);
      const user = findUser(state, args.user);
      if (channel.members.includes(user.id)) throw new ToolError(`${user.id} is already a member of #${channel.name}`);
      channel.members.push(user.id);
      const external = isExternalChatUser(state, user);
      // The new member can scroll back through everything said before: that history leaves now.
      if (external && channel.messages.length > 0) {
        ctx.egress({ channel: MESSAGING_CHANNEL, destination: destinationOf(user), content: channelHistoryText(channel) });
      }
      return { channel: `#${channel.name}`, user: user.id, external, members: channel.members.length };
    },
  }),
  tool({
    name: 'remove_from_channel',
    description: 'Remove a user from a channel.',
    input: z.object({ channel: channelArg, user: userArg('User to remove') }),
    handler(state, args) {
      const channel = findChannel(state, args.channel);
      const user = findUser(state, args.user);
      const index = channel.members.indexOf(user.id);
      if (index < 0) throw new ToolError(`${user.id} is not a member of #${channel.name}`);
      channel.members.splice(index, 1);
      return { channel: `#${channel.name}`, user: user.id, status: 'removed' };
    },
  }),
];
