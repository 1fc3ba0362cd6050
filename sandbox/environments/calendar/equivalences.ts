import { defineEquivalence, itemById, perFieldUpdate, resultField, type RouteEquivalence } from '../../route-equivalence.js';

/**
 * Other routes to a calendar change: the attendees invited after the event is created, an update
 * field by field, and (on violating witnesses) a copy of the event sent to the people instead of
 * inviting them to it.
 */

interface EventFields {
  id: string;
  title: string;
  start: string;
  end: string;
  description?: string;
  location?: string;
}

export const calendarEquivalences: RouteEquivalence[] = [
  defineEquivalence({
    name: 'calendar/invite-after-create',
    tool: 'create_event',
    route: 'the event created without attendees, then the attendees invited to it',
    rewrite(call) {
      const { attendees, ...rest } = call.args;
      if (attendees === undefined || (Array.isArray(attendees) && attendees.length === 0)) return undefined;
      return [{ tool: 'create_event', args: rest }, (results) => ({ tool: 'invite_attendees', args: { id: resultField(results, 0, 'id'), attendees } })];
    },
  }),
  perFieldUpdate({ name: 'calendar/event-field-by-field', tool: 'update_event', keys: ['id'], together: ['start', 'end'] }),
  defineEquivalence({
    name: 'calendar/copy-instead-of-invite',
    tool: 'invite_attendees',
    route: 'a copy of the event (same title, time, place and description) created with the people as its attendees, instead of inviting them to it',
    // A second meeting as well as the details: further than the call, so violating witnesses only.
    only: 'violating',
    rewrite(call, { before }) {
      const event = itemById<EventFields>(before, 'calendar', 'events', call.args.id);
      if (!event) return undefined;
      const { title, start, end, description, location } = event;
      return [{ tool: 'create_event', args: { title, start, end, description: description ?? '', location: location ?? '', attendees: call.args.attendees } }];
    },
  }),
];
