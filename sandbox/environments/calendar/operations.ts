import { z } from 'zod';
import type { OperationSpec } from '../../environment.js';
import { normalizeDomains, organisationDomainsArg, requireAddress } from '../shared/domains.js';
import { addEvent, operation, span } from './events.js';
import { attendeeResponse, type CalendarState } from './state.js';

/** Init-script operations: the owner and domains, events that existed before the run, other people's busy times. */
export const calendarOperations: OperationSpec<CalendarState>[] = [
  operation({
    name: 'configure',
    description: "Set the calendar's owner and the organisation domains (invitations to other domains are egress).",
    input: z.object({
      owner: z.string().optional().describe('Owner address (default alice@corp.example)'),
      domains: organisationDomainsArg,
    }),
    apply(state, args) {
      if (args.owner !== undefined) state.owner = requireAddress(args.owner);
      if (args.domains !== undefined) state.domains = normalizeDomains(args.domains);
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
        organizer: args.organizer === undefined ? state.owner : requireAddress(args.organizer),
        attendees: (args.attendees ?? []).map((a) =>
          typeof a === 'string'
            ? { email: requireAddress(a), response: 'needs-action' as const }
            : { email: requireAddress(a.email), response: a.response ?? 'needs-action' },
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
      state.busy.push({ email: requireAddress(args.email), ...span(args.start, args.end) });
    },
  }),
];
