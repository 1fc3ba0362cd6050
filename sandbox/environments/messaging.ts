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
import { isoDate, reserveId, takeId } from './shared/ids.js';

/**
 * A Slack-like chat workspace seen by one member (`user`): public and private channels, channels
 * shared with other organisations' workspaces (Slack Connect), direct messages, and users inside
 * and outside the organisation. A user is **external** when they belong to another workspace or
 * are a guest. Text that reaches an external user — a post in a channel with an external member,
 * a direct message to one, or a channel's history shown to an outsider who is invited — leaves
 * through the external channel `messaging`.
 */

export const MESSAGING_CHANNEL = 'messaging';

export const chatMessage = z.object({
  id: z.string(),
  /** User id of the author. */
  user: z.string(),
  text: z.string(),
  /** ISO 8601. */
  ts: z.string(),
  /** Id of the message this one replies to in a thread. */
  threadOf: z.string().optional(),
});
export type ChatMessage = z.infer<typeof chatMessage>;

export const chatChannel = z.object({
  id: z.string(),
  /** Lower-case, without `#`. */
  name: z.string(),
  private: z.boolean().default(false),
  topic: z.string().default(''),
  /** User ids. */
  members: z.array(z.string()).default([]),
  /** Other workspaces this channel is shared with (Slack Connect). */
  sharedWith: z.array(z.string()).default([]),
  messages: z.array(chatMessage).default([]),
});
export type ChatChannel = z.infer<typeof chatChannel>;

export const directConversation = z.object({
  id: z.string(),
  /** The other person (user id). */
  with: z.string(),
  messages: z.array(chatMessage).default([]),
});
export type DirectConversation = z.infer<typeof directConversation>;

export const chatUser = z.object({
  /** Handle, e.g. `bob`. */
  id: z.string(),
  name: z.string(),
  email: z.string().default(''),
  /** The workspace the account belongs to; another workspace than the organisation's means external. */
  workspace: z.string(),
  /** Guest accounts (single- or multi-channel guests) are external even in the organisation's workspace. */
  guest: z.boolean().default(false),
});
export type ChatUser = z.infer<typeof chatUser>;

export const messagingState = z.object({
  /** The user the agent acts as. */
  user: z.string().default('alice'),
  /** The organisation's own workspace. */
  workspace: z.string().default('acme'),
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  users: z.array(chatUser).default([]),
  channels: z.array(chatChannel).default([]),
  directMessages: z.array(directConversation).default([]),
  nextId: z.int().min(1).default(1),
});
export type MessagingState = z.infer<typeof messagingState>;

// ---------------------------------------------------------------------------------------------
// Helpers

export function isExternalChatUser(state: MessagingState, user: ChatUser): boolean {
  return user.guest || user.workspace.toLowerCase() !== state.workspace.toLowerCase();
}

function allIds(state: MessagingState): Set<string> {
  const ids = new Set<string>();
  for (const c of state.channels) {
    ids.add(c.id);
    for (const m of c.messages) ids.add(m.id);
  }
  for (const d of state.directMessages) {
    ids.add(d.id);
    for (const m of d.messages) ids.add(m.id);
  }
  return ids;
}

function newId(state: MessagingState, prefix: string, explicit?: string): string {
  const taken = allIds(state);
  if (explicit === undefined) return takeId(state, prefix, taken);
  reserveId(state, explicit, taken);
  return explicit;
}

function findUser(state: MessagingState, ref: string): ChatUser {
  const r = ref.trim().replace(/^@/, '').toLowerCase();
  const user = state.users.find((u) => u.id.toLowerCase() === r || (u.email !== '' && u.email.toLowerCase() === r));
  if (!user) throw new ToolError(`no user "${ref}" (use list_users to see who is in the workspace)`);
  return user;
}

function canSee(state: MessagingState, channel: ChatChannel): boolean {
  return !channel.private || channel.members.includes(state.user);
}

function findChannel(state: MessagingState, ref: string): ChatChannel {
  const r = ref.trim().replace(/^#/, '').toLowerCase();
  const channel = state.channels.find((c) => c.id.toLowerCase() === r || c.name === r);
  // A private channel one is not in does not exist as far as its outsiders can tell.
  if (!channel || !canSee(state, channel)) throw new ToolError(`no channel "${ref}" (or you are not a member of it)`);
  return channel;
}

function channelName(name: string): string {
  const n = name.trim().replace(/^#/, '').toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]{0,79}$/.test(n)) throw new ToolError(`invalid channel name ${JSON.stringify(name)}: use lower-case letters, digits, - _ .`);
  return n;
}

function externalMembers(state: MessagingState, channel: ChatChannel): ChatUser[] {
  return channel.members
    .filter((id) => id !== state.user)
    .map((id) => state.users.find((u) => u.id === id))
    .filter((u): u is ChatUser => u !== undefined && isExternalChatUser(state, u));
}

function destinationOf(user: ChatUser): string {
  return user.email !== '' ? user.email : `@${user.id}`;
}

function chronological(messages: ChatMessage[]): ChatMessage[] {
  return messages
    .map((m, i) => ({ m, i }))
    .sort((a, b) => (a.m.ts < b.m.ts ? -1 : a.m.ts > b.m.ts ? 1 : a.i - b.i))
    .map((x) => x.m);
}

/** A channel's history as an outsider who joins it can scroll through it. */
export function channelHistoryText(channel: ChatChannel): string {
  return [`#${channel.name}${channel.topic ? ` — ${channel.topic}` : ''}`, ...chronological(channel.messages).map((m) => `[${m.ts}] ${m.user}: ${m.text}`)].join('\n');
}

function channelSummary(state: MessagingState, c: ChatChannel) {
  return {
    id: c.id,
    name: c.name,
    private: c.private,
    topic: c.topic,
    members: c.members.length,
    externalMembers: externalMembers(state, c).map((u) => u.id),
    sharedWith: c.sharedWith,
    isMember: c.members.includes(state.user),
  };
}

function userSummary(state: MessagingState, u: ChatUser) {
  return { id: u.id, name: u.name, email: u.email, workspace: u.workspace, guest: u.guest, external: isExternalChatUser(state, u) };
}

function post(state: MessagingState, messages: ChatMessage[], user: string, text: string, options: { id?: string; ts?: string; threadOf?: string } = {}): ChatMessage {
  if (options.threadOf !== undefined && !messages.some((m) => m.id === options.threadOf)) {
    throw new ToolError(`no message "${options.threadOf}" to reply to in this conversation`);
  }
  const message: ChatMessage = {
    id: newId(state, 'msg', options.id),
    user,
    text,
    ts: isoDate(options.ts, 'ts'),
    ...(options.threadOf !== undefined ? { threadOf: options.threadOf } : {}),
  };
  messages.push(message);
  return message;
}

function directWith(state: MessagingState, other: ChatUser, create: boolean, id?: string): DirectConversation | undefined {
  let dm = state.directMessages.find((d) => d.with === other.id);
  if (!dm && create) {
    dm = { id: newId(state, 'D', id), with: other.id, messages: [] };
    state.directMessages.push(dm);
  }
  return dm;
}

function addUser(state: MessagingState, args: { id: string; name?: string; email?: string; workspace?: string; guest?: boolean }): ChatUser {
  const id = args.id.trim().replace(/^@/, '');
  if (!/^[A-Za-z0-9._-]+$/.test(id)) throw new ToolError(`invalid user id ${JSON.stringify(args.id)}`);
  if (state.users.some((u) => u.id.toLowerCase() === id.toLowerCase())) throw new ToolError(`user "${id}" already exists`);
  let email = '';
  if (args.email !== undefined) {
    const normal = normalizeAddress(args.email);
    if (normal === undefined) throw new ToolError(`not an email address: ${JSON.stringify(args.email)}`);
    email = normal;
  }
  // Without an explicit workspace, an address at another organisation's domain belongs to that organisation.
  const workspace = args.workspace ?? (email !== '' && isExternalAddress(email, state.domains) ? email.slice(email.indexOf('@') + 1) : state.workspace);
  const user: ChatUser = { id, name: args.name ?? id, email, workspace, guest: args.guest ?? false };
  state.users.push(user);
  return user;
}

function ensureUser(state: MessagingState, id: string): void {
  if (!state.users.some((u) => u.id === id)) addUser(state, { id, email: `${id}@${state.domains[0] ?? 'corp.example'}`, workspace: state.workspace });
}

function messageView(m: ChatMessage) {
  return { id: m.id, user: m.user, text: m.text, ts: m.ts, ...(m.threadOf ? { threadOf: m.threadOf } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Tools

const tool = <I extends z.ZodObject>(spec: ToolSpec<MessagingState, I>) => defineTool(spec);
const operation = <I extends z.ZodObject>(spec: OperationSpec<MessagingState, I>) => defineOperation(spec);

const channelArg = z.string().min(1).describe('Channel name (general or #general) or id');
const userArg = (what: string) => z.string().min(1).describe(`${what}: user id (bob or @bob) or email address`);

const messagingTools: ToolSpec<MessagingState>[] = [
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
      limit: z.int().min(1).max(200).optional().describe('Maximum number of messages, the most recent ones (default 50)'),
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
      const q = args.query.toLowerCase();
      const results: Array<ReturnType<typeof messageView> & { channel?: string; directWith?: string }> = [];
      for (const c of state.channels.filter((ch) => canSee(state, ch))) {
        for (const m of chronological(c.messages)) if (m.text.toLowerCase().includes(q)) results.push({ channel: `#${c.name}`, ...messageView(m) });
      }
      for (const d of state.directMessages) {
        for (const m of chronological(d.messages)) if (m.text.toLowerCase().includes(q)) results.push({ directWith: d.with, ...messageView(m) });
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
      const q = args.query?.toLowerCase();
      const users = state.users
        .filter((u) => q === undefined || [u.id, u.name, u.email].some((t) => t.toLowerCase().includes(q)))
        .map((u) => userSummary(state, u));
      return { count: users.length, users };
    },
  }),
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

// ---------------------------------------------------------------------------------------------
// Operations

const messagingOperations: OperationSpec<MessagingState>[] = [
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
      if (args.domains !== undefined) state.domains = args.domains.map((d) => d.toLowerCase());
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
      workspace: z
        .string()
        .optional()
        .describe("Workspace the account belongs to (default: the organisation's, or the email's domain when it is outside)"),
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

export const messagingEnvironment = defineStateEnvironment({
  name: 'messaging',
  description:
    'A Slack-like workspace (channels, shared channels, direct messages, users inside and outside the organisation); text that reaches an outside user is egress.',
  externalChannels: [MESSAGING_CHANNEL],
  state: messagingState,
  initial: () => ({
    user: 'alice',
    workspace: 'acme',
    domains: [...DEFAULT_DOMAINS],
    users: [{ id: 'alice', name: 'Alice', email: 'alice@corp.example', workspace: 'acme', guest: false }],
    channels: [],
    directMessages: [],
    nextId: 1,
  }),
  tools: messagingTools,
  operations: messagingOperations,
});
