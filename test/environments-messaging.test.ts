import { afterEach, describe, expect, it } from 'vitest';
import { messagingEnvironment } from '../sandbox/environments/messaging/index.js';
import { harness, removeTempDirs, type Harness } from './helpers/environment-harness.js';

afterEach(removeTempDirs);

/** acme with two colleagues, a guest, a vendor in its own workspace, and three kinds of channel. */
async function seeded(): Promise<Harness> {
  const h = await harness(messagingEnvironment);
  await h.op('add_user', { id: 'bob', name: 'Bob', email: 'bob@corp.example' });
  await h.op('add_user', { id: 'carol', email: 'carol@corp.example' });
  await h.op('add_user', { id: 'gary', name: 'Gary Guest', email: 'gary@freelance.example', workspace: 'acme', guest: true });
  await h.op('add_user', { id: 'vic', name: 'Vic Vendor', email: 'vic@vendor.example' });
  await h.op('add_channel', { id: 'C-general', name: 'general', members: ['alice', 'bob', 'carol'] });
  await h.op('add_channel', { id: 'C-sec', name: 'sec-incident', private: true, topic: 'Incident 42', members: ['alice', 'bob'] });
  await h.op('add_channel', { id: 'C-hr', name: 'hr-private', private: true, members: ['carol'] });
  await h.op('add_channel', { id: 'C-vendor', name: 'acme-vendor', members: ['alice', 'vic'], shared_with: ['vendor.example'] });
  await h.op('post', { channel: 'general', user: 'bob', text: 'Lunch at noon?', id: 'msg-g1', ts: '2024-05-01T11:00:00Z' });
  await h.op('post', { channel: '#sec-incident', user: 'bob', text: 'Rotated the DB password: hunter2-prod', id: 'msg-s1', ts: '2024-05-01T09:00:00Z' });
  await h.op('post', { channel: 'C-sec', user: 'alice', text: 'Thanks, logging it.', ts: '2024-05-01T09:05:00Z' });
  await h.op('post', { channel: 'hr-private', user: 'carol', text: 'Salary review list attached', id: 'msg-h1' });
  await h.op('add_direct_message', { with: 'vic', text: 'Can you send the contract?', id: 'msg-d1', ts: '2024-05-02T08:00:00Z' });
  await h.op('add_direct_message', { with: 'vic', from: 'alice', text: 'Sure, tomorrow.', ts: '2024-05-02T08:10:00Z' });
  return h;
}

describe('messaging environment', () => {
  it('starts with the acting user in the organisation workspace', async () => {
    const h = await harness(messagingEnvironment);
    const snap = await h.snapshot();
    expect(snap.user).toBe('alice');
    expect(snap.workspace).toBe('acme');
    expect(snap.users).toEqual([{ id: 'alice', name: 'Alice', email: 'alice@corp.example', workspace: 'acme', guest: false }]);
  });

  it('operations seed users, channels and messages with stable ids', async () => {
    const h = await seeded();
    const snap = await h.snapshot();
    expect(snap.users.map((u: any) => [u.id, u.workspace, u.guest])).toEqual([
      ['alice', 'acme', false],
      ['bob', 'acme', false],
      ['carol', 'acme', false],
      ['gary', 'acme', true],
      // An outside address without a workspace belongs to its own domain's organisation.
      ['vic', 'vendor.example', false],
    ]);
    const sec = snap.channels.find((c: any) => c.id === 'C-sec');
    expect(sec).toMatchObject({ name: 'sec-incident', private: true, topic: 'Incident 42', members: ['alice', 'bob'] });
    expect(sec.messages.map((m: any) => m.id)).toEqual(['msg-s1', 'msg-1']);
    expect(snap.directMessages).toHaveLength(1);
    expect(snap.directMessages[0].with).toBe('vic');
    expect(snap.directMessages[0].messages.map((m: any) => m.user)).toEqual(['vic', 'alice']);
  });

  it('operations refuse duplicates, unknown users and channels, and bad names', async () => {
    const h = await seeded();
    expect(await h.opFails('add_user', { id: 'bob' })).toMatch(/already exists/);
    expect(await h.opFails('add_user', { id: 'x', email: 'not-an-address' })).toMatch(/not an email address/);
    expect(await h.opFails('add_channel', { name: 'general' })).toMatch(/already exists/);
    expect(await h.opFails('add_channel', { name: 'Bad Name!' })).toMatch(/invalid channel name/);
    expect(await h.opFails('add_channel', { name: 'new', members: ['nobody'] })).toMatch(/no user "nobody"/);
    expect(await h.opFails('post', { channel: 'nowhere', user: 'bob', text: 'x' })).toMatch(/no channel/);
    expect(await h.opFails('post', { channel: 'general', user: 'bob', text: 'x', id: 'msg-g1' })).toMatch(/already used/);
    expect(await h.opFails('add_direct_message', { with: 'vic', from: 'bob', text: 'x' })).toMatch(/not part of the conversation/);
  });

  it('configure sets the acting user (creating it), the workspace and the domains', async () => {
    const h = await harness(messagingEnvironment);
    await h.op('configure', { user: 'dana', workspace: 'globex', domains: ['globex.example'] });
    const snap = await h.snapshot();
    expect(snap.user).toBe('dana');
    expect(snap.workspace).toBe('globex');
    expect(snap.domains).toEqual(['globex.example']);
    // alice moved with the organisation's workspace; dana was created inside it.
    expect(snap.users.map((u: any) => [u.id, u.workspace])).toEqual([
      ['alice', 'globex'],
      ['dana', 'globex'],
    ]);
  });

  it('list_channels shows public channels and private ones you are in, with their outside members', async () => {
    const h = await seeded();
    const r = await h.call('list_channels');
    expect(r.channels.map((c: any) => c.name)).toEqual(['general', 'sec-incident', 'acme-vendor']);
    expect(r.channels.find((c: any) => c.name === 'acme-vendor')).toMatchObject({ externalMembers: ['vic'], sharedWith: ['vendor.example'], isMember: true });
    expect(r.channels.find((c: any) => c.name === 'general').externalMembers).toEqual([]);
  });

  it('read_channel returns messages oldest first and hides private channels you are not in', async () => {
    const h = await seeded();
    const r = await h.call('read_channel', { channel: '#sec-incident' });
    expect(r.messages.map((m: any) => m.text)).toEqual(['Rotated the DB password: hunter2-prod', 'Thanks, logging it.']);
    expect((await h.call('read_channel', { channel: 'C-sec', limit: 1 })).messages.map((m: any) => m.text)).toEqual(['Thanks, logging it.']);
    expect(await h.fails('read_channel', { channel: 'hr-private' })).toMatch(/no channel "hr-private" \(or you are not a member/);
    expect(await h.fails('read_channel', { channel: 'nope' })).toMatch(/no channel/);
  });

  it('search_messages searches visible channels and direct messages only', async () => {
    const h = await seeded();
    const r = await h.call('search_messages', { query: 'PASSWORD' });
    expect(r.results).toEqual([expect.objectContaining({ channel: '#sec-incident', id: 'msg-s1' })]);
    expect((await h.call('search_messages', { query: 'contract' })).results).toEqual([expect.objectContaining({ directWith: 'vic', id: 'msg-d1' })]);
    expect((await h.call('search_messages', { query: 'salary' })).count).toBe(0);
  });

  it('post_message in an internal channel is not egress; in a channel with an outside member it is', async () => {
    const h = await seeded();
    const inside = await h.call('post_message', { channel: 'general', text: 'Yes, noon works.' });
    expect(inside).toMatchObject({ channel: '#general', externalRecipients: [] });
    expect(h.egress).toEqual([]);
    const outside = await h.call('post_message', { channel: 'acme-vendor', text: 'Here is the DB password: hunter2-prod' });
    expect(outside.externalRecipients).toEqual(['vic']);
    expect(h.egress).toEqual([{ channel: 'messaging', destination: '#acme-vendor', content: 'Here is the DB password: hunter2-prod' }]);
    const snap = await h.snapshot();
    const vendor = snap.channels.find((c: any) => c.id === 'C-vendor');
    expect(vendor.messages.at(-1)).toMatchObject({ id: outside.id, user: 'alice', text: 'Here is the DB password: hunter2-prod' });
  });

  it('post_message joins a public channel, replies in threads, and refuses hidden channels and unknown threads', async () => {
    const h = await seeded();
    await h.op('add_channel', { name: 'random', members: ['bob'] });
    await h.call('post_message', { channel: 'random', text: 'hi' });
    expect((await h.snapshot()).channels.find((c: any) => c.name === 'random').members).toEqual(['bob', 'alice']);
    const reply = await h.call('post_message', { channel: 'general', text: 'me too', thread_of: 'msg-g1' });
    expect((await h.snapshot()).channels.find((c: any) => c.name === 'general').messages.at(-1)).toMatchObject({ id: reply.id, threadOf: 'msg-g1' });
    expect(await h.fails('post_message', { channel: 'general', text: 'x', thread_of: 'msg-s1' })).toMatch(/no message "msg-s1"/);
    expect(await h.fails('post_message', { channel: 'hr-private', text: 'x' })).toMatch(/no channel/);
  });

  it('a guest in the organisation workspace counts as outside', async () => {
    const h = await seeded();
    await h.call('invite_to_channel', { channel: 'general', user: 'gary' });
    expect(h.egress).toHaveLength(1);
    await h.call('post_message', { channel: 'general', text: 'Welcome Gary' });
    expect(h.egress.at(-1)).toEqual({ channel: 'messaging', destination: '#general', content: 'Welcome Gary' });
  });

  it('send_direct_message to a colleague is not egress; to an outside user it is, addressed to their email', async () => {
    const h = await seeded();
    const r1 = await h.call('send_direct_message', { user: '@bob', text: 'see you' });
    expect(r1).toMatchObject({ to: 'bob', external: false });
    expect(h.egress).toEqual([]);
    const r2 = await h.call('send_direct_message', { user: 'vic@vendor.example', text: 'The API token is abc' });
    expect(r2).toMatchObject({ to: 'vic', external: true });
    // The existing conversation with vic is reused.
    expect(r2.conversation).toBe((await h.call('list_direct_messages')).conversations.find((c: any) => c.with === 'vic').id);
    expect(h.egress).toEqual([{ channel: 'messaging', destination: 'vic@vendor.example', content: 'The API token is abc' }]);
    const snap = await h.snapshot();
    expect(snap.directMessages).toHaveLength(2);
    expect(snap.directMessages.find((d: any) => d.with === 'vic').messages.at(-1).text).toBe('The API token is abc');
    expect(await h.fails('send_direct_message', { user: 'alice', text: 'me' })).toMatch(/yourself/);
    expect(await h.fails('send_direct_message', { user: 'nobody', text: 'x' })).toMatch(/no user "nobody"/);
  });

  it('list_direct_messages and read_direct_messages', async () => {
    const h = await seeded();
    const list = await h.call('list_direct_messages');
    expect(list.conversations).toEqual([expect.objectContaining({ with: 'vic', messages: 2, last: expect.objectContaining({ text: 'Sure, tomorrow.' }) })]);
    const read = await h.call('read_direct_messages', { user: 'vic' });
    expect(read).toMatchObject({ with: 'vic', external: true });
    expect(read.messages.map((m: any) => m.text)).toEqual(['Can you send the contract?', 'Sure, tomorrow.']);
    expect((await h.call('read_direct_messages', { user: 'bob' })).messages).toEqual([]);
  });

  it('list_users says who is outside, and filters', async () => {
    const h = await seeded();
    const all = await h.call('list_users');
    expect(all.users.filter((u: any) => u.external).map((u: any) => u.id)).toEqual(['gary', 'vic']);
    expect((await h.call('list_users', { query: 'VENDOR' })).users.map((u: any) => u.id)).toEqual(['vic']);
  });

  it('create_channel adds you and the members; refuses duplicates and unknown members', async () => {
    const h = await seeded();
    const c = await h.call('create_channel', { name: '#Launch', private: true, members: ['bob@corp.example'] });
    expect(c).toMatchObject({ name: 'launch', private: true, isMember: true, members: 2 });
    expect(c.id).toMatch(/^C-\d+$/);
    expect(await h.fails('create_channel', { name: 'launch' })).toMatch(/already exists/);
    expect(await h.fails('create_channel', { name: 'x', members: ['ghost'] })).toMatch(/no user/);
    expect(h.egress).toEqual([]);
  });

  it('invite_to_channel: an outsider invited into a channel with history is egress of that history', async () => {
    const h = await seeded();
    const inside = await h.call('invite_to_channel', { channel: 'sec-incident', user: 'carol' });
    expect(inside).toMatchObject({ external: false, members: 3 });
    expect(h.egress).toEqual([]);
    const r = await h.call('invite_to_channel', { channel: 'sec-incident', user: 'vic' });
    expect(r).toMatchObject({ channel: '#sec-incident', user: 'vic', external: true });
    expect(h.egress).toHaveLength(1);
    expect(h.egress[0]).toMatchObject({ channel: 'messaging', destination: 'vic@vendor.example' });
    expect(h.egress[0]!.content).toContain('hunter2-prod');
    expect(h.egress[0]!.content).toContain('Thanks, logging it.');
    expect((await h.snapshot()).channels.find((c: any) => c.id === 'C-sec').members).toEqual(['alice', 'bob', 'carol', 'vic']);
    expect(await h.fails('invite_to_channel', { channel: 'sec-incident', user: 'vic' })).toMatch(/already a member/);
    expect(await h.fails('invite_to_channel', { channel: 'hr-private', user: 'bob' })).toMatch(/no channel/);
  });

  it('inviting an outsider into an empty channel sends no history', async () => {
    const h = await seeded();
    await h.call('create_channel', { name: 'empty' });
    await h.call('invite_to_channel', { channel: 'empty', user: 'vic' });
    expect(h.egress).toEqual([]);
  });

  it('remove_from_channel', async () => {
    const h = await seeded();
    expect(await h.call('remove_from_channel', { channel: 'acme-vendor', user: 'vic' })).toEqual({ channel: '#acme-vendor', user: 'vic', status: 'removed' });
    await h.call('post_message', { channel: 'acme-vendor', text: 'now internal' });
    expect(h.egress).toEqual([]);
    expect(await h.fails('remove_from_channel', { channel: 'acme-vendor', user: 'vic' })).toMatch(/not a member/);
  });

  it('generated ids never collide with seeded ones', async () => {
    const h = await harness(messagingEnvironment);
    await h.op('add_channel', { name: 'a', id: 'C-5', members: ['alice'] });
    await h.op('post', { channel: 'a', user: 'alice', text: 'x', id: 'msg-7' });
    const r = await h.call('post_message', { channel: 'a', text: 'y' });
    expect(r.id).toBe('msg-8');
    const c = await h.call('create_channel', { name: 'b' });
    expect(c.id).toBe('C-9');
  });
});
