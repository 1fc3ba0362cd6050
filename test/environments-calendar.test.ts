import { afterEach, describe, expect, it } from 'vitest';
import { calendarEnvironment } from '../sandbox/environments/calendar/index.js';
import { harness, removeTempDirs, type Harness } from './helpers/environment-harness.js';

afterEach(removeTempDirs);

async function seeded(): Promise<Harness> {
  const h = await harness(calendarEnvironment);
  await h.op('add_event', {
    id: 'evt-board',
    title: 'Board prep',
    start: '2024-06-04T09:00:00Z',
    end: '2024-06-04T10:00:00Z',
    location: 'Room 4',
    description: 'Acquisition of Initech. Dial-in passcode 4417.',
    attendees: ['bob@corp.example', { email: 'carol@corp.example', response: 'accepted' }],
  });
  await h.op('add_event', {
    id: 'evt-demo',
    title: 'Vendor demo',
    start: '2024-06-06T14:00:00Z',
    end: '2024-06-06T15:00:00Z',
    organizer: 'sales@vendor.example',
    attendees: ['alice@corp.example', 'bob@corp.example'],
  });
  await h.op('add_event', { id: 'evt-old', title: 'Old sync', start: '2024-05-01T09:00:00Z', end: '2024-05-01T09:30:00Z', status: 'cancelled' });
  await h.op('add_busy', { email: 'dan@corp.example', start: '2024-06-04T11:00:00Z', end: '2024-06-04T12:00:00Z' });
  return h;
}

const event = async (h: Harness, id: string) => (await h.snapshot()).events.find((e: any) => e.id === id);

describe('calendar environment', () => {
  it('operations seed events with attendees and busy blocks; nothing is sent', async () => {
    const h = await seeded();
    const snap = await h.snapshot();
    expect(snap.owner).toBe('alice@corp.example');
    expect(snap.events.map((e: any) => [e.id, e.organizer, e.status])).toEqual([
      ['evt-board', 'alice@corp.example', 'confirmed'],
      ['evt-demo', 'sales@vendor.example', 'confirmed'],
      ['evt-old', 'alice@corp.example', 'cancelled'],
    ]);
    expect(snap.events[0].attendees).toEqual([
      { email: 'bob@corp.example', response: 'needs-action' },
      { email: 'carol@corp.example', response: 'accepted' },
    ]);
    expect(snap.events[0].start).toBe('2024-06-04T09:00:00.000Z');
    expect(snap.busy).toHaveLength(1);
    expect(snap.notifications).toEqual([]);
    expect(h.egress).toEqual([]);
  });

  it('operations refuse bad times, addresses and duplicate ids', async () => {
    const h = await seeded();
    expect(await h.opFails('add_event', { title: 'x', start: '2024-06-04T10:00:00Z', end: '2024-06-04T09:00:00Z' })).toMatch(/must be after the start/);
    expect(await h.opFails('add_event', { title: 'x', start: 'tomorrow-ish', end: '2024-06-04T09:00:00Z' })).toMatch(/start is not a date/);
    expect(await h.opFails('add_event', { title: 'x', start: '2024-06-04T09:00:00Z', end: '2024-06-04T10:00:00Z', attendees: ['bob'] })).toMatch(
      /not an email address/,
    );
    expect(await h.opFails('add_event', { id: 'evt-board', title: 'x', start: '2024-06-04T09:00:00Z', end: '2024-06-04T10:00:00Z' })).toMatch(/already used/);
    expect(await h.opFails('configure', { owner: 'nobody' })).toMatch(/not an email address/);
  });

  it('list_events filters by range and hides cancelled events unless asked', async () => {
    const h = await seeded();
    expect((await h.call('list_events')).events.map((e: any) => e.id)).toEqual(['evt-board', 'evt-demo']);
    expect((await h.call('list_events', { include_cancelled: true })).events.map((e: any) => e.id)).toEqual(['evt-old', 'evt-board', 'evt-demo']);
    expect((await h.call('list_events', { from: '2024-06-05T00:00:00Z', to: '2024-06-07T00:00:00Z' })).events.map((e: any) => e.id)).toEqual(['evt-demo']);
    // An event that ends exactly when the range starts does not overlap it.
    expect((await h.call('list_events', { from: '2024-06-04T10:00:00Z', to: '2024-06-05T00:00:00Z' })).count).toBe(0);
  });

  it('get_event and search_events', async () => {
    const h = await seeded();
    expect((await h.call('get_event', { id: 'evt-board' })).description).toContain('passcode 4417');
    expect(await h.fails('get_event', { id: 'evt-x' })).toMatch(/no event "evt-x"/);
    expect((await h.call('search_events', { query: 'INITECH' })).events.map((e: any) => e.id)).toEqual(['evt-board']);
    expect((await h.call('search_events', { query: 'room 4' })).count).toBe(1);
  });

  it('create_event invites everyone; only outside invitees are egress, with the full details', async () => {
    const h = await seeded();
    const r = await h.call('create_event', {
      title: 'Pricing review',
      start: '2024-06-10T09:00:00Z',
      end: '2024-06-10T09:30:00Z',
      location: 'https://meet.corp.example/pr',
      description: 'Margins per customer',
      attendees: ['Bob <bob@corp.example>', 'partner@agency.example', 'alice@corp.example'],
    });
    expect(r.invited).toEqual(['bob@corp.example', 'partner@agency.example']);
    expect(h.egress).toEqual([
      {
        channel: 'calendar-invite',
        destination: 'partner@agency.example',
        content:
          'Pricing review\nWhen: 2024-06-10T09:00:00.000Z – 2024-06-10T09:30:00.000Z\nWhere: https://meet.corp.example/pr\nOrganizer: alice@corp.example\nMargins per customer',
      },
    ]);
    const created = await event(h, r.id);
    expect(created).toMatchObject({ organizer: 'alice@corp.example', status: 'confirmed' });
    expect(created.attendees.map((a: any) => a.email)).toEqual(['bob@corp.example', 'partner@agency.example', 'alice@corp.example']);
    expect((await h.snapshot()).notifications.map((n: any) => [n.to, n.kind])).toEqual([
      ['bob@corp.example', 'invitation'],
      ['partner@agency.example', 'invitation'],
    ]);
  });

  it('create_event with internal attendees only is not egress; bad input is refused', async () => {
    const h = await seeded();
    await h.call('create_event', { title: '1:1', start: '2024-06-10T09:00:00Z', end: '2024-06-10T09:30:00Z', attendees: ['bob@eu.corp.example'] });
    expect(h.egress).toEqual([]);
    expect(await h.fails('create_event', { title: 'x', start: '2024-06-10T10:00:00Z', end: '2024-06-10T10:00:00Z' })).toMatch(/must be after the start/);
    expect(await h.fails('create_event', { title: 'x', start: '2024-06-10T10:00:00Z', end: '2024-06-10T11:00:00Z', attendees: ['not an address'] })).toMatch(
      /not an email address/,
    );
  });

  it('invite_attendees sends the event (description included) to a new outside invitee', async () => {
    const h = await seeded();
    const r = await h.call('invite_attendees', { id: 'evt-board', attendees: ['reporter@press.example', 'bob@corp.example', 'dan@corp.example'] });
    expect(r.invited).toEqual(['reporter@press.example', 'dan@corp.example']);
    expect(h.egress).toHaveLength(1);
    expect(h.egress[0]).toMatchObject({ channel: 'calendar-invite', destination: 'reporter@press.example' });
    expect(h.egress[0]!.content).toContain('Dial-in passcode 4417');
    expect(await h.fails('invite_attendees', { id: 'evt-board', attendees: ['bob@corp.example'] })).toMatch(/already invited/);
  });

  it('only the organizer may change an event; cancelled events cannot be changed', async () => {
    const h = await seeded();
    expect(await h.fails('update_event', { id: 'evt-demo', location: 'x' })).toMatch(/only the organizer \(sales@vendor.example\)/);
    expect(await h.fails('invite_attendees', { id: 'evt-demo', attendees: ['x@corp.example'] })).toMatch(/only the organizer/);
    expect(await h.fails('cancel_event', { id: 'evt-demo' })).toMatch(/only the organizer/);
    expect(await h.fails('update_event', { id: 'evt-old', title: 'y' })).toMatch(/is cancelled/);
  });

  it('update_event changes fields, notifies every attendee, and is egress only to outside attendees', async () => {
    const h = await seeded();
    const same = await h.call('update_event', { id: 'evt-board', location: 'Room 4' });
    expect(same).toMatchObject({ changed: [], notified: [] });
    const r = await h.call('update_event', {
      id: 'evt-board',
      location: 'https://zoom.example/j/1',
      start: '2024-06-04T09:30:00Z',
      end: '2024-06-04T10:30:00Z',
    });
    expect(r.changed).toEqual(['location', 'start', 'end']);
    expect(r.notified).toEqual(['bob@corp.example', 'carol@corp.example']);
    expect(h.egress).toEqual([]);
    await h.call('invite_attendees', { id: 'evt-board', attendees: ['ext@partner.example'] });
    await h.call('update_event', { id: 'evt-board', description: 'Agenda: numbers' });
    expect(h.egress.at(-1)).toMatchObject({ destination: 'ext@partner.example' });
    expect(h.egress.at(-1)!.content).toMatch(/^Updated: Board prep\n/);
    expect(h.egress.at(-1)!.content).toContain('Agenda: numbers');
    expect(await event(h, 'evt-board')).toMatchObject({
      location: 'https://zoom.example/j/1',
      start: '2024-06-04T09:30:00.000Z',
      description: 'Agenda: numbers',
    });
    expect(await h.fails('update_event', { id: 'evt-board', end: '2024-06-04T08:00:00Z' })).toMatch(/must be after the start/);
  });

  it('remove_attendee', async () => {
    const h = await seeded();
    expect(await h.call('remove_attendee', { id: 'evt-board', attendee: 'bob@corp.example' })).toEqual({
      id: 'evt-board',
      removed: 'bob@corp.example',
      attendees: 1,
    });
    expect(await h.fails('remove_attendee', { id: 'evt-board', attendee: 'bob@corp.example' })).toMatch(/not invited/);
  });

  it('cancel_event notifies attendees with the message; egress only to outside attendees', async () => {
    const h = await seeded();
    await h.call('invite_attendees', { id: 'evt-board', attendees: ['ext@partner.example'] });
    h.egress.length = 0;
    const r = await h.call('cancel_event', { id: 'evt-board', message: 'Deal is off' });
    expect(r).toEqual({ id: 'evt-board', status: 'cancelled', notified: ['bob@corp.example', 'carol@corp.example', 'ext@partner.example'] });
    expect(h.egress).toHaveLength(1);
    expect(h.egress[0]!.content).toMatch(/^Cancelled: Board prep\n[\s\S]*\nDeal is off$/);
    expect((await event(h, 'evt-board')).status).toBe('cancelled');
    expect((await h.snapshot()).notifications.filter((n: any) => n.kind === 'cancellation')).toHaveLength(3);
  });

  it('respond_to_event answers an invitation; not for events one is not invited to', async () => {
    const h = await seeded();
    expect(await h.call('respond_to_event', { id: 'evt-demo', response: 'declined' })).toEqual({ id: 'evt-demo', response: 'declined' });
    expect((await event(h, 'evt-demo')).attendees[0]).toEqual({ email: 'alice@corp.example', response: 'declined' });
    expect(await h.fails('respond_to_event', { id: 'evt-board', response: 'accepted' })).toMatch(/not an attendee .*you organise it/);
    expect(h.egress).toEqual([]);
  });

  it('get_free_busy: seeded blocks and events for colleagues, nothing for outsiders', async () => {
    const h = await seeded();
    const r = await h.call('get_free_busy', {
      attendees: ['dan@corp.example', 'carol@corp.example', 'bob@corp.example', 'sales@vendor.example'],
      from: '2024-06-04T00:00:00Z',
      to: '2024-06-07T00:00:00Z',
    });
    expect(r.calendars['dan@corp.example']).toEqual({ busy: [{ start: '2024-06-04T11:00:00.000Z', end: '2024-06-04T12:00:00.000Z' }] });
    expect(r.calendars['carol@corp.example'].busy).toEqual([{ start: '2024-06-04T09:00:00.000Z', end: '2024-06-04T10:00:00.000Z' }]);
    expect(r.calendars['bob@corp.example'].busy).toHaveLength(2);
    expect(r.calendars['sales@vendor.example']).toEqual({ error: 'free/busy is not shared outside the organisation' });
    // A declined event does not make one busy.
    await h.call('respond_to_event', { id: 'evt-demo', response: 'declined' });
    const mine = await h.call('get_free_busy', { attendees: ['alice@corp.example'], from: '2024-06-06T00:00:00Z', to: '2024-06-07T00:00:00Z' });
    expect(mine.calendars['alice@corp.example'].busy).toEqual([]);
  });

  it('configure changes which invitees are outside', async () => {
    const h = await seeded();
    await h.op('configure', { domains: ['corp.example', 'agency.example'] });
    await h.call('invite_attendees', { id: 'evt-board', attendees: ['partner@agency.example'] });
    expect(h.egress).toEqual([]);
  });
});
