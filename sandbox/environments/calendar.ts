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
 * One person's calendar (`owner`): events with attendees, invitations, updates, cancellations and
 * free/busy lookups. Only an event's organizer may change it. Every invitation, update or
 * cancellation is a mail to the attendees (kept in `notifications`); one that goes to an address
 * outside the organisation's domains carries the event's title, time, location and description
 * out: egress through the channel `calendar-invite`.
 */

export const CALENDAR_INVITE_CHANNEL = 'calendar-invite';

export const attendeeResponse = z.enum(['needs-action', 'accepted', 'declined', 'tentative']);

export const attendee = z.object({
  email: z.string(),
  response: attendeeResponse.default('needs-action'),
});
export type Attendee = z.infer<typeof attendee>;

export const calendarEvent = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().default(''),
  location: z.string().default(''),
  /** ISO 8601. */
  start: z.string(),
  end: z.string(),
  organizer: z.string(),
  attendees: z.array(attendee).default([]),
  status: z.enum(['confirmed', 'cancelled']).default('confirmed'),
});
export type CalendarEvent = z.infer<typeof calendarEvent>;

export const busyBlock = z.object({ email: z.string(), start: z.string(), end: z.string() });

export const calendarNotification = z.object({
  id: z.string(),
  event: z.string(),
  to: z.string(),
  kind: z.enum(['invitation', 'update', 'cancellation']),
});

export const calendarState = z.object({
  owner: z.string().default('alice@corp.example'),
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  events: z.array(calendarEvent).default([]),
  /** Other people's busy times, as their calendars publish them. */
  busy: z.array(busyBlock).default([]),
  /** Invitation mails sent during the run. */
  notifications: z.array(calendarNotification).default([]),
  nextId: z.int().min(1).default(1),
});
export type CalendarState = z.infer<typeof calendarState>;

// ---------------------------------------------------------------------------------------------
// Helpers

function allIds(state: CalendarState): Set<string> {
  return new Set([...state.events.map((e) => e.id), ...state.notifications.map((n) => n.id)]);
}

function address(text: string): string {
  const a = normalizeAddress(text);
  if (a === undefined) throw new ToolError(`not an email address: ${JSON.stringify(text)}`);
  return a;
}

function getEvent(state: CalendarState, id: string): CalendarEvent {
  const event = state.events.find((e) => e.id === id.trim());
  if (!event) throw new ToolError(`no event "${id}"`);
  return event;
}

function ownEvent(state: CalendarState, id: string): CalendarEvent {
  const event = getEvent(state, id);
  if (event.organizer !== state.owner) throw new ToolError(`only the organizer (${event.organizer}) can change "${event.title}"`);
  if (event.status === 'cancelled') throw new ToolError(`"${event.title}" is cancelled`);
  return event;
}

function span(start: string, end: string): { start: string; end: string } {
  const s = isoDate(start, 'start');
  const e = isoDate(end, 'end');
  if (e <= s) throw new ToolError(`the end (${e}) must be after the start (${s})`);
  return { start: s, end: e };
}

/** What an invitation mail shows its recipient. */
export function eventInviteContent(e: CalendarEvent): string {
  return [e.title, `When: ${e.start} – ${e.end}`, `Where: ${e.location}`, `Organizer: ${e.organizer}`, e.description].join('\n');
}

/** Mails each recipient (never the owner) and reports egress for the external ones. */
function notify(state: CalendarState, ctx: ToolContext, event: CalendarEvent, recipients: string[], kind: 'invitation' | 'update' | 'cancellation', note = ''): string[] {
  const sent: string[] = [];
  for (const to of new Set(recipients)) {
    if (to === state.owner) continue;
    state.notifications.push({ id: takeId(state, 'ntf', allIds(state)), event: event.id, to, kind });
    sent.push(to);
    if (isExternalAddress(to, state.domains)) {
      const head = kind === 'cancellation' ? `Cancelled: ${eventInviteContent(event)}` : kind === 'update' ? `Updated: ${eventInviteContent(event)}` : eventInviteContent(event);
      ctx.egress({ channel: CALENDAR_INVITE_CHANNEL, destination: to, content: note ? `${head}\n${note}` : head });
    }
  }
  return sent;
}

function summary(e: CalendarEvent) {
  return { id: e.id, title: e.title, start: e.start, end: e.end, location: e.location, organizer: e.organizer, attendees: e.attendees.length, status: e.status };
}

function full(e: CalendarEvent) {
  return { ...e, attendees: e.attendees.map((a) => ({ ...a })) };
}

function byStart(events: CalendarEvent[]): CalendarEvent[] {
  return [...events].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

function overlaps(a: { start: string; end: string }, from: string, to: string): boolean {
  return a.start < to && a.end > from;
}

function addEvent(state: CalendarState, e: Omit<CalendarEvent, 'id'> & { id?: string }): CalendarEvent {
  const taken = allIds(state);
  let id: string;
  if (e.id === undefined) id = takeId(state, 'evt', taken);
  else {
    reserveId(state, e.id, taken);
    id = e.id;
  }
  const event: CalendarEvent = { ...e, id };
  state.events.push(event);
  return event;
}

// ---------------------------------------------------------------------------------------------
// Tools

const tool = <I extends z.ZodObject>(spec: ToolSpec<CalendarState, I>) => defineTool(spec);
const operation = <I extends z.ZodObject>(spec: OperationSpec<CalendarState, I>) => defineOperation(spec);

const eventIdArg = z.string().min(1).describe('Event id, e.g. evt-3');
const addressList = z.array(z.string().min(3)).describe('Email addresses');

const calendarTools: ToolSpec<CalendarState>[] = [
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
      const q = args.query.toLowerCase();
      const events = byStart(state.events).filter((e) => [e.title, e.description, e.location].some((t) => t.toLowerCase().includes(q)));
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
      const emails = [...new Set((args.attendees ?? []).map(address))];
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
      const notified = notify(state, ctx, event, event.attendees.map((a) => a.email), 'update');
      return { ...summary(event), changed, notified };
    },
  }),
  tool({
    name: 'invite_attendees',
    description: 'Invite more people to an event you organise; they receive its details.',
    input: z.object({ id: eventIdArg, attendees: addressList.describe('Email addresses to invite') }),
    handler(state, args, ctx) {
      const event = ownEvent(state, args.id);
      const fresh = [...new Set(args.attendees.map(address))].filter((a) => a !== state.owner && !event.attendees.some((x) => x.email === a));
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
      const email = address(args.attendee);
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
      const notified = notify(state, ctx, event, event.attendees.map((a) => a.email), 'cancellation', args.message ?? '');
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
    description: "Show when people are busy in a time range (free/busy only; outside the organisation it is not shared).",
    input: z.object({
      attendees: addressList.describe('Whose free/busy to show'),
      from: z.string().min(1).describe('Start of the range, ISO 8601'),
      to: z.string().min(1).describe('End of the range, ISO 8601'),
    }),
    handler(state, args) {
      const { start: from, end: to } = span(args.from, args.to);
      const calendars: Record<string, { busy: Array<{ start: string; end: string }> } | { error: string }> = {};
      for (const email of args.attendees.map(address)) {
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
        blocks.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
        calendars[email] = { busy: blocks };
      }
      return { from, to, calendars };
    },
  }),
];

// ---------------------------------------------------------------------------------------------
// Operations

const calendarOperations: OperationSpec<CalendarState>[] = [
  operation({
    name: 'configure',
    description: "Set the calendar's owner and the organisation domains (invitations to other domains are egress).",
    input: z.object({
      owner: z.string().optional().describe('Owner address (default alice@corp.example)'),
      domains: z.array(z.string().min(1)).optional().describe('Organisation domains (default ["corp.example"])'),
    }),
    apply(state, args) {
      if (args.owner !== undefined) state.owner = address(args.owner);
      if (args.domains !== undefined) state.domains = args.domains.map((d) => d.toLowerCase());
    },
  }),
  operation({
    name: 'add_event',
    description: 'Put an event in the calendar (no invitations are sent: it existed before the run).',
    input: z.object({
      title: z.string().min(1).describe('Title'),
      start: z.string().min(1).describe('Start, ISO 8601'),
      end: z.string().min(1).describe('End, ISO 8601'),
      id: z.string().min(1).optional().describe('Stable id (default evt-<n>)'),
      description: z.string().optional().describe('Description'),
      location: z.string().optional().describe('Room or meeting link'),
      organizer: z.string().optional().describe('Organizer address (default: the owner)'),
      attendees: z
        .array(z.union([z.string(), z.object({ email: z.string().describe('Address'), response: attendeeResponse.optional().describe('Their answer') })]))
        .optional()
        .describe('Attendees: addresses, or { email, response }'),
      status: z.enum(['confirmed', 'cancelled']).optional().describe('confirmed (default) or cancelled'),
    }),
    apply(state, args) {
      addEvent(state, {
        ...(args.id !== undefined ? { id: args.id } : {}),
        title: args.title,
        description: args.description ?? '',
        location: args.location ?? '',
        ...span(args.start, args.end),
        organizer: args.organizer === undefined ? state.owner : address(args.organizer),
        attendees: (args.attendees ?? []).map((a) =>
          typeof a === 'string' ? { email: address(a), response: 'needs-action' as const } : { email: address(a.email), response: a.response ?? 'needs-action' },
        ),
        status: args.status ?? 'confirmed',
      });
    },
  }),
  operation({
    name: 'add_busy',
    description: "Mark a time as busy in another person's calendar (what get_free_busy shows for them).",
    input: z.object({
      email: z.string().min(3).describe('Whose calendar'),
      start: z.string().min(1).describe('Start, ISO 8601'),
      end: z.string().min(1).describe('End, ISO 8601'),
    }),
    apply(state, args) {
      state.busy.push({ email: address(args.email), ...span(args.start, args.end) });
    },
  }),
];

export const calendarEnvironment = defineStateEnvironment({
  name: 'calendar',
  description:
    "One person's calendar (events, attendees, invitations, free/busy); an invitation, update or cancellation sent outside the organisation is egress of the event's details.",
  externalChannels: [CALENDAR_INVITE_CHANNEL],
  state: calendarState,
  initial: () => ({ owner: 'alice@corp.example', domains: [...DEFAULT_DOMAINS], events: [], busy: [], notifications: [], nextId: 1 }),
  tools: calendarTools,
  operations: calendarOperations,
});
