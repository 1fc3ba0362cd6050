import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { compareText, matchesQuery } from '../shared/collections.js';
import { isExternalAddress, requireAddress } from '../shared/domains.js';
import { isoDate } from '../shared/ids.js';
import { addEvent, byStart, full, getEvent, notify, overlaps, ownEvent, span, summary, tool } from './events.js';
import type { CalendarEvent, CalendarState } from './state.js';

const eventIdArg = z.string().min(1).describe('Event id, e.g. evt-3');
const addressList = z.array(z.string().min(3)).describe('Email addresses');

export const calendarTools: ToolSpec<CalendarState>[] = [
  tool({
    name: 'list_events',
    description: 'List calendar events in a time range, earliest first.',
    input: z.object({
      from: z.string().optional().describe('Start of the range, ISO 8601 (default: no lower bound)'),
      to: z.string().optional().describe('End of the range, ISO 8601 (default: no upper bound)'),
      include_cancelled: z.boolean().optional().describe('Also list cancelled events (default false)'),
    }),
    handler(state, args) {
      const from = args.from === undefined ? '' : isoDate(args.from, 'from');
      const to = args.to === undefined ? '\uffff' : isoDate(args.to, 'to');
      const events = byStart(state.events).filter((e) => (args.include_cancelled || e.status !== 'cancelled') && overlaps(e, from, to));
      return { count: events.length, events: events.map(summary) };
    },
  }),
  tool({
    name: 'get_event',
    description: 'Read one event in full: description, location and every attendee with their response.',
    input: z.object({ id: eventIdArg }),
    handler(state, args) {
      return full(getEvent(state, args.id));
    },
  }),
  tool({
    name: 'search_events',
    description: 'Find events whose title, description or location contains the query (case-insensitive).',
    input: z.object({ query: z.string().min(1).describe('Text to look for') }),
    handler(state, args) {
      const events = byStart(state.events).filter((e) => matchesQuery(args.query, e.title, e.description, e.location));
      return { query: args.query, count: events.length, events: events.map(summary) };
    },
  }),
  tool({
    name: 'create_event',
    description: 'Create an event organised by you and send invitations to the attendees.',
    input: z.object({
      title: z.string().min(1).describe('Event title'),
      start: z.string().min(1).describe('Start, ISO 8601 (e.g. 2024-06-04T10:00:00Z)'),
      end: z.string().min(1).describe('End, ISO 8601'),
      description: z.string().optional().describe('Description / agenda'),
      location: z.string().optional().describe('Room or meeting link'),
      attendees: addressList.optional().describe('Email addresses to invite'),
    }),
    handler(state, args, ctx) {
      const when = span(args.start, args.end);
      const emails = [...new Set((args.attendees ?? []).map(requireAddress))];
      const event = addEvent(state, {
        title: args.title,
        description: args.description ?? '',
        location: args.location ?? '',
        ...when,
        organizer: state.owner,
        attendees: emails.map((email) => ({ email, response: 'needs-action' as const })),
        status: 'confirmed',
      });
      const invited = notify(state, ctx, event, emails, 'invitation');
      return { ...summary(event), invited };
    },
  }),
  tool({
    name: 'update_event',
    description: 'Change an event you organise (title, time, place, description); every attendee gets the update.',
    input: z.object({
      id: eventIdArg,
      title: z.string().min(1).optional().describe('New title'),
      start: z.string().optional().describe('New start, ISO 8601'),
      end: z.string().optional().describe('New end, ISO 8601'),
      description: z.string().optional().describe('New description'),
      location: z.string().optional().describe('New room or meeting link'),
    }),
    handler(state, args, ctx) {
      const event = ownEvent(state, args.id);
      const when = span(args.start ?? event.start, args.end ?? event.end);
      const changed: string[] = [];
      const set = <K extends 'title' | 'description' | 'location' | 'start' | 'end'>(key: K, value: CalendarEvent[K] | undefined) => {
        if (value !== undefined && value !== event[key]) {
          event[key] = value;
          changed.push(key);
        }
      };
      set('title', args.title);
      set('description', args.description);
      set('location', args.location);
      set('start', when.start);
      set('end', when.end);
      if (changed.length === 0) return { ...summary(event), changed, notified: [] };
      const notified = notify(
        state,
        ctx,
        event,
        event.attendees.map((a) => a.email),
        'update',
      );
      return { ...summary(event), changed, notified };
    },
  }),
  tool({
    name: 'invite_attendees',
    description: 'Invite more people to an event you organise; they receive its details.',
    input: z.object({ id: eventIdArg, attendees: addressList.describe('Email addresses to invite') }),
    handler(state, args, ctx) {
      const event = ownEvent(state, args.id);
      const fresh = [...new Set(args.attendees.map(requireAddress))].filter((a) => a !== state.owner && !event.attendees.some((x) => x.email === a));
      if (fresh.length === 0) throw new ToolError('everyone listed is already invited');
      for (const email of fresh) event.attendees.push({ email, response: 'needs-action' });
      const invited = notify(state, ctx, event, fresh, 'invitation');
      return { id: event.id, invited, attendees: event.attendees.length };
    },
  }),
  tool({
    name: 'remove_attendee',
    description: 'Take one person off an event you organise.',
    input: z.object({ id: eventIdArg, attendee: z.string().min(3).describe('Email address to remove') }),
    handler(state, args) {
      const event = ownEvent(state, args.id);
      const email = requireAddress(args.attendee);
      const index = event.attendees.findIndex((a) => a.email === email);
      if (index < 0) throw new ToolError(`${email} is not invited to "${event.title}"`);
      event.attendees.splice(index, 1);
      return { id: event.id, removed: email, attendees: event.attendees.length };
    },
  }),
  tool({
    name: 'cancel_event',
    description: 'Cancel an event you organise; attendees get a cancellation notice with your message.',
    input: z.object({ id: eventIdArg, message: z.string().optional().describe('Note sent with the cancellation') }),
    handler(state, args, ctx) {
      const event = ownEvent(state, args.id);
      event.status = 'cancelled';
      const notified = notify(
        state,
        ctx,
        event,
        event.attendees.map((a) => a.email),
        'cancellation',
        args.message ?? '',
      );
      return { id: event.id, status: event.status, notified };
    },
  }),
  tool({
    name: 'respond_to_event',
    description: 'Accept, decline or tentatively accept an event you are invited to.',
    input: z.object({ id: eventIdArg, response: z.enum(['accepted', 'declined', 'tentative']).describe('Your answer') }),
    handler(state, args) {
      const event = getEvent(state, args.id);
      const me = event.attendees.find((a) => a.email === state.owner);
      if (!me) throw new ToolError(`you are not an attendee of "${event.title}"${event.organizer === state.owner ? ' (you organise it)' : ''}`);
      me.response = args.response;
      return { id: event.id, response: me.response };
    },
  }),
  tool({
    name: 'get_free_busy',
    description: 'Show when people are busy in a time range (free/busy only; outside the organisation it is not shared).',
    input: z.object({
      attendees: addressList.describe('Whose free/busy to show'),
      from: z.string().min(1).describe('Start of the range, ISO 8601'),
      to: z.string().min(1).describe('End of the range, ISO 8601'),
    }),
    handler(state, args) {
      const { start: from, end: to } = span(args.from, args.to);
      const calendars: Record<string, { busy: Array<{ start: string; end: string }> } | { error: string }> = {};
      for (const email of args.attendees.map(requireAddress)) {
        if (isExternalAddress(email, state.domains)) {
          calendars[email] = { error: 'free/busy is not shared outside the organisation' };
          continue;
        }
        const blocks = state.busy.filter((b) => b.email === email && overlaps(b, from, to)).map((b) => ({ start: b.start, end: b.end }));
        for (const e of state.events) {
          if (e.status === 'cancelled' || !overlaps(e, from, to)) continue;
          const takesPart = e.organizer === email || e.attendees.some((a) => a.email === email && a.response !== 'declined');
          if (takesPart) blocks.push({ start: e.start, end: e.end });
        }
        blocks.sort((a, b) => compareText(a.start, b.start));
        calendars[email] = { busy: blocks };
      }
      return { from, to, calendars };
    },
  }),
];
