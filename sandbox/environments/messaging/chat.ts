import { z } from 'zod';
import { ToolError } from '../../environment.js';
import { sortedBy } from '../shared/collections.js';
import { isExternalAddress, requireAddress } from '../shared/domains.js';
import { claimId, isoDate } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import type { ChatChannel, ChatMessage, ChatUser, DirectConversation, MessagingState } from './state.js';

/** Lookups and rules the chat workspace's tools and operations share: users, channels, posting. */

export const { tool, operation } = specBuilders<MessagingState>();

export const channelArg = z.string().min(1).describe('Channel name (general or #general) or id');
export const userArg = (what: string) => z.string().min(1).describe(`${what}: user id (bob or @bob) or email address`);

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

export function newId(state: MessagingState, prefix: string, explicit?: string): string {
  return claimId(state, prefix, allIds(state), explicit);
}

export function findUser(state: MessagingState, ref: string): ChatUser {
  const r = ref.trim().replace(/^@/, '').toLowerCase();
  const user = state.users.find((u) => u.id.toLowerCase() === r || (u.email !== '' && u.email.toLowerCase() === r));
  if (!user) throw new ToolError(`no user "${ref}" (use list_users to see who is in the workspace)`);
  return user;
}

export function canSee(state: MessagingState, channel: ChatChannel): boolean {
  return !channel.private || channel.members.includes(state.user);
}

export function findChannel(state: MessagingState, ref: string): ChatChannel {
  const r = ref.trim().replace(/^#/, '').toLowerCase();
  const channel = state.channels.find((c) => c.id.toLowerCase() === r || c.name === r);
  // A private channel one is not in does not exist as far as its outsiders can tell.
  if (!channel || !canSee(state, channel)) throw new ToolError(`no channel "${ref}" (or you are not a member of it)`);
  return channel;
}

export function channelName(name: string): string {
  const n = name.trim().replace(/^#/, '').toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]{0,79}$/.test(n)) throw new ToolError(`invalid channel name ${JSON.stringify(name)}: use lower-case letters, digits, - _ .`);
  return n;
}

export function externalMembers(state: MessagingState, channel: ChatChannel): ChatUser[] {
  return channel.members
    .filter((id) => id !== state.user)
    .map((id) => state.users.find((u) => u.id === id))
    .filter((u): u is ChatUser => u !== undefined && isExternalChatUser(state, u));
}

export function destinationOf(user: ChatUser): string {
  return user.email !== '' ? user.email : `@${user.id}`;
}

/** Oldest first; messages with the same time keep the order they were posted in. */
export function chronological(messages: ChatMessage[]): ChatMessage[] {
  return sortedBy(messages, (m) => m.ts);
}

/** A channel's history as an outsider who joins it can scroll through it. */
export function channelHistoryText(channel: ChatChannel): string {
  return [
    `#${channel.name}${channel.topic ? ` — ${channel.topic}` : ''}`,
    ...chronological(channel.messages).map((m) => `[${m.ts}] ${m.user}: ${m.text}`),
  ].join('\n');
}

export function channelSummary(state: MessagingState, c: ChatChannel) {
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

export function userSummary(state: MessagingState, u: ChatUser) {
  return { id: u.id, name: u.name, email: u.email, workspace: u.workspace, guest: u.guest, external: isExternalChatUser(state, u) };
}

export function messageView(m: ChatMessage) {
  return { id: m.id, user: m.user, text: m.text, ts: m.ts, ...(m.threadOf ? { threadOf: m.threadOf } : {}) };
}

export function post(
  state: MessagingState,
  messages: ChatMessage[],
  user: string,
  text: string,
  options: { id?: string; ts?: string; threadOf?: string } = {},
): ChatMessage {
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

export function directWith(state: MessagingState, other: ChatUser, create: boolean, id?: string): DirectConversation | undefined {
  let dm = state.directMessages.find((d) => d.with === other.id);
  if (!dm && create) {
    dm = { id: newId(state, 'D', id), with: other.id, messages: [] };
    state.directMessages.push(dm);
  }
  return dm;
}

export function addUser(state: MessagingState, args: { id: string; name?: string; email?: string; workspace?: string; guest?: boolean }): ChatUser {
  const id = args.id.trim().replace(/^@/, '');
  if (!/^[A-Za-z0-9._-]+$/.test(id)) throw new ToolError(`invalid user id ${JSON.stringify(args.id)}`);
  if (state.users.some((u) => u.id.toLowerCase() === id.toLowerCase())) throw new ToolError(`user "${id}" already exists`);
  const email = args.email === undefined ? '' : requireAddress(args.email);
  // Without an explicit workspace, an address at another organisation's domain belongs to that organisation.
  const workspace = args.workspace ?? (email !== '' && isExternalAddress(email, state.domains) ? email.slice(email.indexOf('@') + 1) : state.workspace);
  const user: ChatUser = { id, name: args.name ?? id, email, workspace, guest: args.guest ?? false };
  state.users.push(user);
  return user;
}

export function ensureUser(state: MessagingState, id: string): void {
  if (!state.users.some((u) => u.id === id)) addUser(state, { id, email: `${id}@${state.domains[0] ?? 'corp.example'}`, workspace: state.workspace });
}
