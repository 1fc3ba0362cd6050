import { defineEquivalence, perFieldUpdate, resultField, type RouteEquivalence } from '../../route-equivalence.js';

/** Other routes to a calendar change: the attendees invited after the event is created, an update field by field. */
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
];
