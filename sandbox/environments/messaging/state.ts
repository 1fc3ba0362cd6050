import { z } from 'zod';
import { DEFAULT_DOMAINS } from '../shared/domains.js';

/** The chat workspace's state: users, channels, direct conversations. See `index.ts`. */

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
