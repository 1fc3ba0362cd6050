import { z } from 'zod';
import { DEFAULT_DOMAINS } from '../shared/domains.js';

/** The calendar's state: events, other people's busy times, invitation mails sent. See `index.ts`. */

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
