import { ToolError, type ToolContext } from '../../environment.js';
import { sortedBy } from '../shared/collections.js';
import { egressToAddress } from '../shared/egress.js';
import { claimId, isoDate, takeId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { CALENDAR_INVITE_CHANNEL, type CalendarEvent, type CalendarState } from './state.js';

/** Lookups and rules the calendar's tools and operations share: events, times, invitation mails. */

export const { tool, operation } = specBuilders<CalendarState>();

function allIds(state: CalendarState): Set<string> {
  return new Set([...state.events.map((e) => e.id), ...state.notifications.map((n) => n.id)]);
}

export function getEvent(state: CalendarState, id: string): CalendarEvent {
  const event = state.events.find((e) => e.id === id.trim());
  if (!event) throw new ToolError(`no event "${id}"`);
  return event;
}

export function ownEvent(state: CalendarState, id: string): CalendarEvent {
  const event = getEvent(state, id);
  if (event.organizer !== state.owner) throw new ToolError(`only the organizer (${event.organizer}) can change "${event.title}"`);
  if (event.status === 'cancelled') throw new ToolError(`"${event.title}" is cancelled`);
  return event;
}

export function span(start: string, end: string): { start: string; end: string } {
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
export function notify(
  state: CalendarState,
  ctx: ToolContext,
  event: CalendarEvent,
  recipients: string[],
  kind: 'invitation' | 'update' | 'cancellation',
  note = '',
): string[] {
  const sent: string[] = [];
  for (const to of new Set(recipients)) {
    if (to === state.owner) continue;
    state.notifications.push({ id: takeId(state, 'ntf', allIds(state)), event: event.id, to, kind });
    sent.push(to);
    const head =
      kind === 'cancellation'
        ? `Cancelled: ${eventInviteContent(event)}`
        : kind === 'update'
          ? `Updated: ${eventInviteContent(event)}`
          : eventInviteContent(event);
    egressToAddress(ctx, state.domains, { channel: CALENDAR_INVITE_CHANNEL, destination: to, content: note ? `${head}\n${note}` : head });
  }
  return sent;
}

export function summary(e: CalendarEvent) {
  return {
    id: e.id,
    title: e.title,
    start: e.start,
    end: e.end,
    location: e.location,
    organizer: e.organizer,
    attendees: e.attendees.length,
    status: e.status,
  };
}

export function full(e: CalendarEvent) {
  return { ...e, attendees: e.attendees.map((a) => ({ ...a })) };
}

/** Earliest first; events that start together keep their order. */
export function byStart(events: CalendarEvent[]): CalendarEvent[] {
  return sortedBy(events, (e) => e.start);
}

export function overlaps(a: { start: string; end: string }, from: string, to: string): boolean {
  return a.start < to && a.end > from;
}

export function addEvent(state: CalendarState, e: Omit<CalendarEvent, 'id'> & { id?: string }): CalendarEvent {
  const event: CalendarEvent = { ...e, id: claimId(state, 'evt', allIds(state), e.id) };
  state.events.push(event);
  return event;
}
