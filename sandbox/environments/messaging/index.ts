import { defineStateEnvironment } from '../../environment.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import { channelMembershipTools, channelMessageTools } from './channel-tools.js';
import { directMessageTools } from './direct-message-tools.js';
import { messagingOperations } from './operations.js';
import { MESSAGING_CHANNEL, messagingState } from './state.js';
import { messagingEquivalences } from './equivalences.js';

/**
 * A Slack-like chat workspace seen by one member (`user`): public and private channels, channels
 * shared with other organisations' workspaces (Slack Connect), direct messages, and users inside
 * and outside the organisation. A user is **external** when they belong to another workspace or
 * are a guest. Text that reaches an external user — a post in a channel with an external member,
 * a direct message to one, or a channel's history shown to an outsider who is invited — leaves
 * through the external channel `messaging`.
 */

export * from './state.js';
export { channelHistoryText, isExternalChatUser } from './chat.js';

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
  tools: [...channelMessageTools, ...directMessageTools, ...channelMembershipTools],
  operations: messagingOperations,
  equivalences: messagingEquivalences,
});
