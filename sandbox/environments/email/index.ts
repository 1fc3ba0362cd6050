import { defineStateEnvironment } from '../../environment.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import { contactTools } from './contact-tools.js';
import { messageTools } from './message-tools.js';
import { emailOperations } from './operations.js';
import { emailEquivalences } from './equivalences.js';
import { emailSnapshot } from './snapshot.js';
import { EMAIL_CHANNEL, emailState } from './state.js';

/**
 * A mailbox of one person in the organisation: inbox, sent mail, trash and contacts. Mail to an
 * address outside the organisation's domains leaves through the external channel `email`.
 */

export * from './state.js';
export { emailEgressContent } from './mailbox.js';

export const emailEnvironment = defineStateEnvironment({
  name: 'email',
  description: "One person's mailbox (inbox, sent, trash, contacts); mail to addresses outside the organisation's domains is egress.",
  externalChannels: [EMAIL_CHANNEL],
  state: emailState,
  initial: () => ({
    owner: 'alice@corp.example',
    domains: [...DEFAULT_DOMAINS],
    inbox: [],
    sent: [],
    trash: [],
    contacts: [],
    nextId: 1,
  }),
  tools: [...messageTools, ...contactTools],
  operations: emailOperations,
  equivalences: emailEquivalences,
  snapshot: emailSnapshot,
});
