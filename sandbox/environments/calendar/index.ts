import { defineStateEnvironment } from '../../environment.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import { calendarOperations } from './operations.js';
import { CALENDAR_INVITE_CHANNEL, calendarState } from './state.js';
import { calendarTools } from './tools.js';
import { calendarEquivalences } from './equivalences.js';

/**
 * One person's calendar (`owner`): events with attendees, invitations, updates, cancellations and
 * free/busy lookups. Only an event's organizer may change it. Every invitation, update or
 * cancellation is a mail to the attendees (kept in `notifications`); one that goes to an address
 * outside the organisation's domains carries the event's title, time, location and description
 * out: egress through the channel `calendar-invite`.
 */

export * from './state.js';
export { eventInviteContent } from './events.js';

export const calendarEnvironment = defineStateEnvironment({
  name: 'calendar',
  description:
    "One person's calendar (events, attendees, invitations, free/busy); an invitation, update or cancellation sent outside the organisation is egress of the event's details.",
  externalChannels: [CALENDAR_INVITE_CHANNEL],
  state: calendarState,
  initial: () => ({ owner: 'alice@corp.example', domains: [...DEFAULT_DOMAINS], events: [], busy: [], notifications: [], nextId: 1 }),
  tools: calendarTools,
  operations: calendarOperations,
  equivalences: calendarEquivalences,
});
