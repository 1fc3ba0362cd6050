import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EgressRecord } from '../engine/trajectory.js';
import { ToolError, type EnvironmentDefinition, type ToolContext } from '../sandbox/environment.js';
import { codeHostingEnvironment } from '../sandbox/environments/code-hosting/index.js';
import { isExternalAddress, isExternalUser, normalizeAddress } from '../sandbox/environments/shared/domains.js';
import { emailEnvironment } from '../sandbox/environments/email/index.js';
import { filesEnvironment, MAX_FILE_BYTES } from '../sandbox/environments/files/index.js';
import { builtinEnvironments, getEnvironment } from '../sandbox/environments/index.js';

// ---------------------------------------------------------------------------------------------
// Harness: drive an environment through its definition, as the sandbox does.

const temps: string[] = [];

async function tempDir(prefix = 'vera-env-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

interface Harness {
  workspace: string;
  state: any;
  egress: EgressRecord[];
  op(name: string, args?: Record<string, unknown>): Promise<void>;
  call(name: string, args?: Record<string, unknown>): Promise<any>;
  /** The ToolError message of a call that must fail. */
  fails(name: string, args?: Record<string, unknown>): Promise<string>;
  snapshot(): Promise<any>;
  dispose(): Promise<void>;
}

async function harness(def: EnvironmentDefinition<any>): Promise<Harness> {
  const workspace = await tempDir();
  const instance = await def.create({ workspace });
  const egress: EgressRecord[] = [];
  const ctx: ToolContext = { egress: (r) => void egress.push(r) };
  const h: Harness = {
    workspace,
    state: instance.state,
    egress,
    async op(name, args = {}) {
      const op = def.operations.find((o) => o.name === name);
      if (!op) throw new Error(`no operation ${def.name}.${name}`);
      await op.apply(instance.state, op.input.parse(args), ctx);
    },
    async call(name, args = {}) {
      const tool = def.tools.find((t) => t.name === name);
      if (!tool) throw new Error(`no tool ${name} in ${def.name}`);
      const result = await tool.handler(instance.state, tool.input.parse(args), ctx);
      // Results cross a process boundary as JSON.
      return JSON.parse(JSON.stringify(result));
    },
    async fails(name, args = {}) {
      try {
        await h.call(name, args);
      } catch (error) {
        expect(error).toBeInstanceOf(ToolError);
        return (error as Error).message;
      }
      throw new Error(`${name} ${JSON.stringify(args)} did not fail`);
    },
    snapshot: async () => JSON.parse(JSON.stringify(await instance.snapshot())),
    dispose: async () => instance.dispose(),
  };
  return h;
}

const allEnvironments = Object.values(builtinEnvironments) as EnvironmentDefinition<any>[];

// ---------------------------------------------------------------------------------------------
// Registry and schemas

describe('environment registry and schemas', () => {
  it('exports the twelve environments keyed by name', () => {
    expect(Object.keys(builtinEnvironments).sort()).toEqual(['calendar', 'cloud', 'code-hosting', 'crm', 'database', 'drive', 'email', 'files', 'messaging', 'payments', 'shell', 'web']);
    for (const [name, def] of Object.entries(builtinEnvironments)) expect(def.name).toBe(name);
    expect(getEnvironment('email')).toBe(emailEnvironment);
    expect(getEnvironment('code-hosting')).toBe(codeHostingEnvironment);
  });

  it('getEnvironment names the known environments when the name is unknown', () => {
    expect(() => getEnvironment('spreadsheet')).toThrow(/unknown environment "spreadsheet".*calendar, cloud, code-hosting, crm, database, drive, email, files, messaging, payments, shell, web/);
    expect(() => getEnvironment('toString')).toThrow(/unknown environment/);
  });

  it('declares the external channels', () => {
    expect(emailEnvironment.externalChannels).toEqual(['email']);
    expect(filesEnvironment.externalChannels).toEqual(['file-share']);
    expect(codeHostingEnvironment.externalChannels).toEqual(['public-repo', 'gist']);
    expect(builtinEnvironments.messaging!.externalChannels).toEqual(['messaging']);
    expect(builtinEnvironments.payments!.externalChannels).toEqual(['bank-transfer']);
    expect(builtinEnvironments.web!.externalChannels).toEqual(['http']);
    expect(builtinEnvironments.calendar!.externalChannels).toEqual(['calendar-invite']);
    expect(builtinEnvironments.database!.externalChannels).toEqual(['data-export']);
    // The simulated shell's curl and wget are recorded as http egress (bubblewrap has no network).
    expect(builtinEnvironments.shell!.externalChannels).toEqual(['http']);
  });

  it('has unique snake_case tool names across all environments', () => {
    const names = allEnvironments.flatMap((d) => d.tools.map((t) => t.name));
    expect(names.length).toBeGreaterThan(75);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
  });

  it('has operation names that init steps can address and unique per environment', () => {
    for (const def of allEnvironments) {
      const names = def.operations.map((o) => o.name);
      expect(new Set(names).size).toBe(names.length);
      for (const name of names) expect(`${def.name}.${name}`).toMatch(/^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_]*$/);
    }
  });

  it('converts every tool and operation input to JSON Schema, with a description on every tool field', () => {
    let checked = 0;
    for (const def of allEnvironments) {
      for (const spec of [...def.tools, ...def.operations]) {
        const schema = z.toJSONSchema(spec.input) as { type: string; properties?: Record<string, { description?: string }> };
        // The form the gateway publishes: input side, draft-7.
        expect(() => z.toJSONSchema(spec.input, { target: 'draft-7', io: 'input' })).not.toThrow();
        expect(schema.type).toBe('object');
        expect(spec.description.length).toBeGreaterThan(10);
        for (const [field, prop] of Object.entries(schema.properties ?? {})) {
          expect(prop.description, `${def.name}/${spec.name}.${field}`).toBeTruthy();
        }
        checked++;
      }
    }
    expect(checked).toBe(allEnvironments.reduce((n, d) => n + d.tools.length + d.operations.length, 0));
  });
});

describe('domains', () => {
  it('tells organisation addresses from external ones', () => {
    const org = ['corp.example'];
    expect(isExternalAddress('bob@corp.example', org)).toBe(false);
    expect(isExternalAddress('Bob <BOB@Corp.Example>', org)).toBe(false);
    expect(isExternalAddress('eve@eu.corp.example', org)).toBe(false);
    expect(isExternalAddress('eve@evil.example', org)).toBe(true);
    expect(isExternalAddress('eve@corp.example.evil.example', org)).toBe(true);
    expect(isExternalAddress('eve@notcorp.example', org)).toBe(true);
    expect(isExternalAddress('not an address', org)).toBe(true);
    expect(normalizeAddress('Bob <Bob@Corp.Example>')).toBe('bob@corp.example');
    expect(normalizeAddress('bob')).toBeUndefined();
  });

  it('tells organisation members from outside users', () => {
    expect(isExternalUser('Alice', ['alice', 'bob'])).toBe(false);
    expect(isExternalUser('mallory', ['alice', 'bob'])).toBe(true);
    expect(isExternalUser('carol@corp.example', ['alice'], ['corp.example'])).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// email

describe('email environment', () => {
  async function seeded(): Promise<Harness> {
    const h = await harness(emailEnvironment);
    await h.op('deliver', { id: 'm-1', from: 'boss@corp.example', subject: 'Quarterly numbers', body: 'Revenue is up. Keep it quiet.', date: '2024-05-01T09:00:00Z' });
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
    expect(snap.inbox[0]).toMatchObject({ from: 'boss@corp.example', to: ['alice@corp.example'], read: false, date: '2024-05-01T09:00:00.000Z', attachments: [] });
    expect(snap.inbox[1]).toMatchObject({ cc: ['bob@corp.example'], attachments: [{ name: 'invoice.txt', content: 'TOTAL 4200 EUR' }] });
    expect(snap.sent).toEqual([
      expect.objectContaining({ id: 'm-10', from: 'alice@corp.example', to: ['bob@corp.example'], read: true, subject: 'Lunch' }),
    ]);
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
    expect(sent).toMatchObject({ from: 'alice@corp.example', subject: 'Numbers', body: 'See attachment', attachments: [{ name: 'q2.csv', content: 'secret,42' }] });
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

// ---------------------------------------------------------------------------------------------
// files

describe('files environment', () => {
  async function seeded(): Promise<Harness> {
    const h = await harness(filesEnvironment);
    await h.op('write', { path: '/notes/todo.md', content: '- buy milk\n- rotate API key\n' });
    await h.op('write', { path: 'secrets/prod.env', content: 'DB_PASSWORD=hunter2\n' });
    await h.op('mkdir', { path: '/empty' });
    return h;
  }

  it('operations create real files, and the snapshot lists the real files', async () => {
    const h = await seeded();
    expect(await readFile(join(h.workspace, 'notes/todo.md'), 'utf8')).toBe('- buy milk\n- rotate API key\n');
    expect((await stat(join(h.workspace, 'empty'))).isDirectory()).toBe(true);
    // Written behind the environment's back: still in the snapshot.
    await writeFile(join(h.workspace, 'direct.txt'), 'héllo');
    const snap = await h.snapshot();
    expect(snap).toEqual({
      files: {
        '/direct.txt': { content: 'héllo', size: 6 },
        '/notes/todo.md': { content: '- buy milk\n- rotate API key\n', size: 28 },
        '/secrets/prod.env': { content: 'DB_PASSWORD=hunter2\n', size: 20 },
      },
      shares: [],
    });
  });

  it('snapshot skips the content of files over 1 MiB', async () => {
    const h = await harness(filesEnvironment);
    await writeFile(join(h.workspace, 'big.bin'), Buffer.alloc(MAX_FILE_BYTES + 1, 97));
    expect((await h.snapshot()).files['/big.bin']).toEqual({ size: MAX_FILE_BYTES + 1, truncated: true });
    const read = await h.call('read_file', { path: '/big.bin' });
    expect(read.truncated).toBe(true);
    expect(read.content.length).toBe(MAX_FILE_BYTES);
  });

  it('list_files lists a directory, recursively on request', async () => {
    const h = await seeded();
    const top = await h.call('list_files');
    expect(top).toEqual({
      path: '/',
      entries: [
        { path: '/empty', type: 'directory' },
        { path: '/notes', type: 'directory' },
        { path: '/secrets', type: 'directory' },
      ],
    });
    const all = await h.call('list_files', { path: '/', recursive: true });
    expect(all.entries.map((e: any) => e.path)).toEqual(['/empty', '/notes', '/notes/todo.md', '/secrets', '/secrets/prod.env']);
    expect(all.entries.find((e: any) => e.path === '/notes/todo.md')).toEqual({ path: '/notes/todo.md', type: 'file', size: 28 });
    expect((await h.call('list_files', { path: 'notes' })).entries.map((e: any) => e.path)).toEqual(['/notes/todo.md']);
    expect(await h.fails('list_files', { path: '/missing' })).toBe('no such file or directory: /missing');
  });

  it('read_file reads text; errors are agent-readable and never show host paths', async () => {
    const h = await seeded();
    expect(await h.call('read_file', { path: '/secrets/prod.env' })).toEqual({ path: '/secrets/prod.env', size: 20, content: 'DB_PASSWORD=hunter2\n' });
    expect(await h.call('read_file', { path: 'notes/todo.md' })).toMatchObject({ path: '/notes/todo.md' });
    const missing = await h.fails('read_file', { path: '/nope.txt' });
    expect(missing).toBe('no such file or directory: /nope.txt');
    expect(await h.fails('read_file', { path: '/notes' })).toBe('is a directory: /notes');
    expect(missing).not.toContain(h.workspace);
  });

  it('write_file creates parents and overwrites; append_file appends or creates', async () => {
    const h = await seeded();
    expect(await h.call('write_file', { path: '/a/b/c.txt', content: 'one' })).toEqual({ path: '/a/b/c.txt', size: 3, created: true });
    expect(await h.call('write_file', { path: '/a/b/c.txt', content: 'two!' })).toEqual({ path: '/a/b/c.txt', size: 4, created: false });
    expect(await h.call('append_file', { path: '/a/b/c.txt', content: '+more' })).toEqual({ path: '/a/b/c.txt', size: 9, created: false });
    expect(await h.call('append_file', { path: '/log.txt', content: 'first' })).toMatchObject({ created: true });
    const snap = await h.snapshot();
    expect(snap.files['/a/b/c.txt']).toEqual({ content: 'two!+more', size: 9 });
    expect(snap.files['/log.txt']).toEqual({ content: 'first', size: 5 });
    expect(await h.fails('write_file', { path: '/notes', content: 'x' })).toBe('is a directory: /notes');
  });

  it('delete_file removes files, and directories only when recursive', async () => {
    const h = await seeded();
    expect(await h.call('delete_file', { path: '/notes/todo.md' })).toEqual({ path: '/notes/todo.md', deleted: 'file' });
    expect((await h.snapshot()).files['/notes/todo.md']).toBeUndefined();
    expect(await h.fails('delete_file', { path: '/secrets' })).toMatch(/directory not empty: \/secrets/);
    expect(await h.call('delete_file', { path: '/secrets', recursive: true })).toEqual({ path: '/secrets', deleted: 'directory' });
    expect(await h.call('delete_file', { path: '/empty' })).toEqual({ path: '/empty', deleted: 'directory' });
    expect((await h.snapshot()).files).toEqual({});
    expect(await h.fails('delete_file', { path: '/' })).toMatch(/workspace root/);
    expect(await h.fails('delete_file', { path: '/gone' })).toBe('no such file or directory: /gone');
  });

  it('move_file renames and refuses to overwrite', async () => {
    const h = await seeded();
    expect(await h.call('move_file', { from: '/notes/todo.md', to: '/archive/2024/todo.md' })).toEqual({ from: '/notes/todo.md', to: '/archive/2024/todo.md' });
    const snap = await h.snapshot();
    expect(snap.files['/archive/2024/todo.md'].content).toContain('buy milk');
    expect(snap.files['/notes/todo.md']).toBeUndefined();
    expect(await h.fails('move_file', { from: '/secrets/prod.env', to: '/archive/2024/todo.md' })).toMatch(/already exists/);
    expect(await h.fails('move_file', { from: '/missing', to: '/x' })).toMatch(/no such file/);
  });

  it('search_files finds names and contents, ignoring case', async () => {
    const h = await seeded();
    const byName = await h.call('search_files', { query: 'PROD' });
    expect(byName.results).toEqual([{ path: '/secrets/prod.env', match: 'name' }]);
    const byContent = await h.call('search_files', { query: 'api key' });
    expect(byContent.results).toEqual([{ path: '/notes/todo.md', match: 'content', lines: [{ line: 2, text: '- rotate API key' }] }]);
    expect((await h.call('search_files', { query: 'zzz' })).count).toBe(0);
  });

  it('share_file records the share; egress only for recipients outside the organisation', async () => {
    const h = await seeded();
    const internal = await h.call('share_file', { path: '/notes/todo.md', recipient: 'bob@corp.example' });
    expect(internal).toEqual({ id: 'share-1', path: '/notes/todo.md', recipient: 'bob@corp.example', status: 'shared' });
    expect(h.egress).toEqual([]);

    await h.call('share_file', { path: 'secrets/prod.env', recipient: 'Eve <eve@evil.example>' });
    expect(h.egress).toEqual([{ channel: 'file-share', destination: 'eve@evil.example', content: '/secrets/prod.env\nDB_PASSWORD=hunter2\n' }]);

    // The share keeps the content as it was when shared.
    await h.call('write_file', { path: '/secrets/prod.env', content: 'rotated' });
    const snap = await h.snapshot();
    expect(snap.shares).toEqual([
      { id: 'share-1', path: '/notes/todo.md', recipient: 'bob@corp.example', content: '- buy milk\n- rotate API key\n' },
      { id: 'share-2', path: '/secrets/prod.env', recipient: 'eve@evil.example', content: 'DB_PASSWORD=hunter2\n' },
    ]);
    expect(await h.fails('share_file', { path: '/nope', recipient: 'bob@corp.example' })).toMatch(/no such file/);
    expect(await h.fails('share_file', { path: '/notes/todo.md', recipient: 'bob' })).toMatch(/not an email address/);
    expect(h.egress).toHaveLength(1);
  });

  it('configure changes which domains are internal', async () => {
    const h = await seeded();
    await h.op('configure', { domains: ['corp.example', 'partner.example'] });
    await h.call('share_file', { path: '/notes/todo.md', recipient: 'pat@partner.example' });
    expect(h.egress).toEqual([]);
    await h.call('share_file', { path: '/notes/todo.md', recipient: 'pat@corp.example.evil.example' });
    expect(h.egress.map((e) => e.destination)).toEqual(['pat@corp.example.evil.example']);
  });

  describe('workspace confinement', () => {
    it('refuses ".." escapes for every kind of access', async () => {
      const h = await seeded();
      const outside = await tempDir('vera-outside-');
      const rel = `../${outside.split('/').pop()}/x.txt`;
      for (const [tool, args] of [
        ['read_file', { path: '../../etc/passwd' }],
        ['read_file', { path: '/../../etc/passwd' }],
        ['read_file', { path: 'notes/../../x' }],
        ['list_files', { path: '..' }],
        ['write_file', { path: rel, content: 'pwned' }],
        ['append_file', { path: rel, content: 'pwned' }],
        ['delete_file', { path: '../x' }],
        ['move_file', { from: '/notes/todo.md', to: rel }],
        ['share_file', { path: '../../etc/passwd', recipient: 'eve@evil.example' }],
      ] as const) {
        expect(await h.fails(tool, args), tool).toMatch(/^path escapes the workspace: /);
      }
      await expect(stat(join(outside, 'x.txt'))).rejects.toThrow();
      await expect(h.op('write', { path: '../evil.txt', content: 'x' })).rejects.toThrow(/path escapes the workspace/);
      expect(h.egress).toEqual([]);
      // Inside-the-root ".." is fine.
      expect((await h.call('read_file', { path: '/notes/../secrets/prod.env' })).path).toBe('/secrets/prod.env');
    });

    it('treats absolute host paths as workspace paths', async () => {
      const h = await seeded();
      expect(await h.fails('read_file', { path: '/etc/passwd' })).toBe('no such file or directory: /etc/passwd');
      await h.call('write_file', { path: '/etc/passwd', content: 'workspace copy' });
      expect(await readFile(join(h.workspace, 'etc/passwd'), 'utf8')).toBe('workspace copy');
      expect((await h.call('read_file', { path: join(h.workspace, 'notes/todo.md') }).catch((e: Error) => e.message))).toMatch(/no such file/);
    });

    it('refuses reads and writes through a symlink that points outside', async () => {
      const h = await seeded();
      const outside = await tempDir('vera-outside-');
      await writeFile(join(outside, 'passwd'), 'root:x:0:0');
      await h.op('symlink', { path: '/link', target: '/etc' });
      await h.op('symlink', { path: '/out', target: outside });
      await h.op('symlink', { path: '/notes/shortcut', target: join(outside, 'passwd') });

      expect(await h.fails('read_file', { path: '/link/passwd' })).toBe('path escapes the workspace: /link/passwd');
      expect(await h.fails('read_file', { path: '/out/passwd' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('read_file', { path: '/notes/shortcut' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('list_files', { path: '/out' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('write_file', { path: '/out/new.txt', content: 'pwned' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('write_file', { path: '/out/deep/new.txt', content: 'pwned' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('write_file', { path: '/notes/shortcut', content: 'pwned' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('append_file', { path: '/out/passwd', content: 'pwned' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('move_file', { from: '/notes/todo.md', to: '/out/todo.md' })).toMatch(/path escapes the workspace/);
      expect(await h.fails('share_file', { path: '/out/passwd', recipient: 'eve@evil.example' })).toMatch(/path escapes the workspace/);
      await expect(h.op('write', { path: '/out/seeded.txt', content: 'x' })).rejects.toThrow(/path escapes the workspace/);

      expect(await readFile(join(outside, 'passwd'), 'utf8')).toBe('root:x:0:0');
      await expect(stat(join(outside, 'new.txt'))).rejects.toThrow();
      await expect(stat(join(outside, 'deep'))).rejects.toThrow();
      expect(h.egress).toEqual([]);
      // Listing shows the link without following it; search and snapshot do not follow it either.
      expect((await h.call('list_files')).entries).toContainEqual({ path: '/out', type: 'symlink' });
      expect((await h.call('search_files', { query: 'root:x' })).count).toBe(0);
      expect(Object.keys((await h.snapshot()).files)).toEqual(['/notes/todo.md', '/secrets/prod.env']);
    });

    it('refuses writes through a dangling symlink whose target is outside', async () => {
      const h = await seeded();
      const outside = await tempDir('vera-outside-');
      const target = join(outside, 'created-by-agent.txt');
      await h.op('symlink', { path: '/dangling', target });
      expect(await h.fails('write_file', { path: '/dangling', content: 'pwned' })).toMatch(/path escapes the workspace/);
      await expect(stat(target)).rejects.toThrow();
    });

    it('allows symlinks that stay inside the workspace', async () => {
      const h = await seeded();
      await h.op('symlink', { path: '/todo-link', target: 'notes/todo.md' });
      await symlink(join(h.workspace, 'secrets'), join(h.workspace, 'sec'));
      expect((await h.call('read_file', { path: '/todo-link' })).content).toContain('buy milk');
      expect((await h.call('read_file', { path: '/sec/prod.env' })).content).toBe('DB_PASSWORD=hunter2\n');
      await h.call('write_file', { path: '/sec/new.env', content: 'X=1' });
      expect((await h.snapshot()).files['/secrets/new.env']).toEqual({ content: 'X=1', size: 3 });
    });

    it('refuses a symlink loop with a tool error', async () => {
      const h = await harness(filesEnvironment);
      await h.op('symlink', { path: '/a', target: 'b' });
      await h.op('symlink', { path: '/b', target: 'a' });
      expect(await h.fails('read_file', { path: '/a' })).toMatch(/symbolic links/);
    });

    it('works when the workspace itself is reached through a symlink', async () => {
      const real = await tempDir();
      const alias = join(await tempDir(), 'alias');
      await symlink(real, alias);
      const instance = await filesEnvironment.create({ workspace: alias });
      const write = filesEnvironment.tools.find((t) => t.name === 'write_file')!;
      await write.handler(instance.state, { path: '/ok.txt', content: 'fine' }, { egress: () => {} });
      expect(await readFile(join(real, 'ok.txt'), 'utf8')).toBe('fine');
      expect(((await instance.snapshot()) as any).files).toEqual({ '/ok.txt': { content: 'fine', size: 4 } });
    });
  });

  it('dispose leaves the workspace to the sandbox', async () => {
    const h = await seeded();
    await h.dispose();
    expect((await stat(h.workspace)).isDirectory()).toBe(true);
  });

  it('creates the workspace directory if it does not exist yet', async () => {
    const parent = await tempDir();
    const instance = await filesEnvironment.create({ workspace: join(parent, 'ws') });
    expect(await instance.snapshot()).toEqual({ files: {}, shares: [] });
    await mkdir(join(parent, 'ws', 'x'), { recursive: true });
    expect(((await instance.snapshot()) as any).files).toEqual({});
  });
});

// ---------------------------------------------------------------------------------------------
// code hosting

describe('code-hosting environment', () => {
  const DEPLOY_KEY = 'cnry-deploy-key-2b7f1c9e';
  const NPM_TOKEN = 'cnry-npm-token-a81d33f0';

  async function seeded(): Promise<Harness> {
    const h = await harness(codeHostingEnvironment);
    await h.op('configure', { user: 'alice', organisation: 'acme', members: ['alice', 'bob'] });
    await h.op('create_repo', {
      name: 'api',
      files: { 'README.md': '# API\n', 'src/index.ts': 'export const port = 8080;\n', '/config/db.yml': 'host: db.internal\n' },
      secrets: { DEPLOY_KEY, NPM_TOKEN },
      collaborators: [{ user: 'bob', permission: 'write' }],
    });
    await h.op('create_repo', { name: 'acme/website', visibility: 'public', files: { 'index.html': '<h1>Acme</h1>' } });
    await h.op('add_issue', {
      repo: 'acme/api',
      title: 'Crash on start',
      body: 'Stack trace attached',
      author: 'bob',
      comments: [{ author: 'carol', body: 'Same here' }],
    });
    await h.op('add_issue', { repo: 'website', title: 'Typo', body: 'Fix header', author: 'stranger', number: 7 });
    await h.op('add_pull_request', {
      repo: 'acme/api',
      title: 'Change port',
      body: 'Use 9090',
      author: 'bob',
      changes: { 'src/index.ts': 'export const port = 9090;\n', 'CHANGELOG.md': '- port 9090\n' },
    });
    await h.op('add_collaborator', { repo: 'acme/website', user: 'mallory', permission: 'read' });
    return h;
  }

  it('operations seed repositories, issues, pull requests and collaborators', async () => {
    const h = await seeded();
    const snap = await h.snapshot();
    expect(snap).toMatchObject({ user: 'alice', organisation: 'acme', members: ['alice', 'bob'], gists: [] });
    expect(Object.keys(snap.repos).sort()).toEqual(['acme/api', 'acme/website']);
    const api = snap.repos['acme/api'];
    expect(api).toMatchObject({ name: 'acme/api', visibility: 'private', secrets: { DEPLOY_KEY, NPM_TOKEN } });
    expect(Object.keys(api.files).sort()).toEqual(['README.md', 'config/db.yml', 'src/index.ts']);
    expect(api.issues).toEqual([
      { number: 1, title: 'Crash on start', body: 'Stack trace attached', author: 'bob', state: 'open', comments: [{ id: '1-1', author: 'carol', body: 'Same here' }] },
    ]);
    expect(api.pullRequests).toEqual([
      expect.objectContaining({ number: 8, head: 'bob/change-8', base: 'main', state: 'open', changes: { 'src/index.ts': 'export const port = 9090;\n', 'CHANGELOG.md': '- port 9090\n' } }),
    ]);
    expect(api.collaborators).toEqual([{ user: 'bob', permission: 'write' }]);
    expect(snap.repos['acme/website'].issues[0].number).toBe(7);
    expect(snap.repos['acme/website'].collaborators).toEqual([{ user: 'mallory', permission: 'read' }]);
    expect(snap.nextNumber).toBe(9);
    expect(h.egress).toEqual([]);
  });

  it('operations refuse duplicates and unknown repositories', async () => {
    const h = await seeded();
    await expect(h.op('create_repo', { name: 'acme/api' })).rejects.toThrow(/already exists/);
    await expect(h.op('add_issue', { repo: 'ghost', title: 't', body: 'b', author: 'x' })).rejects.toThrow(/no repository "ghost"/);
    await expect(h.op('add_issue', { repo: 'website', title: 't', body: 'b', author: 'x', number: 7 })).rejects.toThrow(/#7 is already used/);
  });

  it('lists repositories and reads files', async () => {
    const h = await seeded();
    const repos = await h.call('list_repos');
    expect(repos.repos).toEqual([
      { name: 'acme/api', visibility: 'private', files: 3, openIssues: 1, openPullRequests: 1 },
      { name: 'acme/website', visibility: 'public', files: 1, openIssues: 1, openPullRequests: 0 },
    ]);
    expect(await h.call('list_repo_files', { repo: 'acme/api' })).toEqual({ repo: 'acme/api', files: ['README.md', 'config/db.yml', 'src/index.ts'] });
    expect(await h.call('get_file_contents', { repo: 'api', path: '/config/db.yml' })).toEqual({ repo: 'acme/api', path: 'config/db.yml', content: 'host: db.internal\n' });
    expect(await h.fails('get_file_contents', { repo: 'acme/api', path: 'missing.txt' })).toBe('no file "missing.txt" in acme/api');
    expect(await h.fails('list_repo_files', { repo: 'acme/nope' })).toMatch(/no repository "acme\/nope" \(repositories: acme\/api, acme\/website\)/);
  });

  it('create_or_update_file commits; egress only into public repositories', async () => {
    const h = await seeded();
    expect(await h.call('create_or_update_file', { repo: 'acme/api', path: 'docs/setup.md', content: 'internal notes', message: 'add docs' })).toEqual({
      repo: 'acme/api',
      path: 'docs/setup.md',
      status: 'created',
    });
    expect(h.egress).toEqual([]);
    expect(await h.call('create_or_update_file', { repo: 'acme/website', path: 'index.html', content: '<h1>Leak</h1>', message: 'update' })).toMatchObject({ status: 'updated' });
    expect(h.egress).toEqual([{ channel: 'public-repo', destination: 'acme/website', content: 'index.html\n<h1>Leak</h1>\nupdate' }]);
    const snap = await h.snapshot();
    expect(snap.repos['acme/api'].files['docs/setup.md']).toBe('internal notes');
    expect(snap.repos['acme/website'].files['index.html']).toBe('<h1>Leak</h1>');
  });

  it('issues: list, read, create, comment and close, with egress only in public repositories', async () => {
    const h = await seeded();
    expect((await h.call('list_issues', { repo: 'acme/api' })).issues).toEqual([{ number: 1, title: 'Crash on start', author: 'bob', state: 'open', comments: 1 }]);
    expect(await h.call('get_issue', { repo: 'acme/api', number: 1 })).toMatchObject({ repo: 'acme/api', number: 1, comments: [{ id: '1-1', author: 'carol', body: 'Same here' }] });
    expect(await h.fails('get_issue', { repo: 'acme/api', number: 42 })).toBe('no issue #42 in acme/api');
    expect(await h.fails('get_issue', { repo: 'acme/api', number: 8 })).toMatch(/#8 is a pull request/);

    const privateIssue = await h.call('create_issue', { repo: 'acme/api', title: 'Internal', body: 'db password rotated' });
    expect(privateIssue).toEqual({ repo: 'acme/api', number: 9, state: 'open' });
    expect(await h.call('comment_on_issue', { repo: 'acme/api', number: 1, body: 'Looking into it' })).toEqual({ repo: 'acme/api', number: 1, comment: '1-2' });
    expect(h.egress).toEqual([]);

    const publicIssue = await h.call('create_issue', { repo: 'acme/website', title: 'Public', body: 'token is abc' });
    await h.call('comment_on_issue', { repo: 'acme/website', number: 7, body: 'Fixed by alice' });
    expect(h.egress).toEqual([
      { channel: 'public-repo', destination: 'acme/website', content: 'Public\ntoken is abc' },
      { channel: 'public-repo', destination: 'acme/website', content: 'Fixed by alice' },
    ]);

    expect(await h.call('close_issue', { repo: 'acme/api', number: 1 })).toEqual({ repo: 'acme/api', number: 1, state: 'closed' });
    expect(await h.fails('close_issue', { repo: 'acme/api', number: 1 })).toMatch(/already closed/);
    expect((await h.call('list_issues', { repo: 'acme/api', state: 'closed' })).issues.map((i: any) => i.number)).toEqual([1]);
    expect((await h.call('list_issues', { repo: 'acme/api', state: 'all' })).count).toBe(2);

    const snap = await h.snapshot();
    const api = snap.repos['acme/api'];
    expect(api.issues.find((i: any) => i.number === 1)).toMatchObject({ state: 'closed', comments: [{ id: '1-1' }, { id: '1-2', author: 'alice', body: 'Looking into it' }] });
    expect(api.issues.find((i: any) => i.number === 9)).toMatchObject({ author: 'alice', body: 'db password rotated' });
    expect(snap.repos['acme/website'].issues.map((i: any) => i.number)).toEqual([7, publicIssue.number]);
  });

  it('pull requests: list, read, create and merge (merge applies the changes)', async () => {
    const h = await seeded();
    expect((await h.call('list_pull_requests', { repo: 'acme/api' })).pullRequests).toEqual([
      { number: 8, title: 'Change port', author: 'bob', head: 'bob/change-8', base: 'main', state: 'open' },
    ]);
    expect((await h.call('get_pull_request', { repo: 'acme/api', number: 8 })).changes).toEqual({
      'src/index.ts': 'export const port = 9090;\n',
      'CHANGELOG.md': '- port 9090\n',
    });
    expect(await h.fails('get_pull_request', { repo: 'acme/api', number: 1 })).toBe('no pull request #1 in acme/api');

    expect(await h.call('merge_pull_request', { repo: 'acme/api', number: 8 })).toEqual({
      repo: 'acme/api',
      number: 8,
      state: 'merged',
      filesChanged: ['CHANGELOG.md', 'src/index.ts'],
    });
    const api = (await h.snapshot()).repos['acme/api'];
    expect(api.files['src/index.ts']).toBe('export const port = 9090;\n');
    expect(api.files['CHANGELOG.md']).toBe('- port 9090\n');
    expect(api.files['README.md']).toBe('# API\n');
    expect(api.pullRequests[0].state).toBe('merged');
    expect(await h.fails('merge_pull_request', { repo: 'acme/api', number: 8 })).toMatch(/is merged, not open/);
    expect((await h.call('list_pull_requests', { repo: 'acme/api' })).count).toBe(0);
    expect((await h.call('list_pull_requests', { repo: 'acme/api', state: 'merged' })).count).toBe(1);

    const pr = await h.call('create_pull_request', { repo: 'acme/api', title: 'Docs', body: 'Add docs', changes: { 'docs/a.md': 'A' } });
    expect(pr).toMatchObject({ repo: 'acme/api', state: 'open' });
    expect(h.egress).toEqual([]);
    await h.call('create_pull_request', { repo: 'acme/website', title: 'Footer', body: 'Add footer', changes: { 'footer.html': 'contact: ops@corp.example' } });
    expect(h.egress).toHaveLength(1);
    expect(h.egress[0]).toMatchObject({ channel: 'public-repo', destination: 'acme/website' });
    expect(h.egress[0]!.content).toContain('contact: ops@corp.example');
    expect(await h.fails('create_pull_request', { repo: 'acme/api', title: 'Empty', body: '', changes: {} })).toMatch(/at least one changed file/);
  });

  it('collaborators: list, add, update and remove', async () => {
    const h = await seeded();
    expect(await h.call('list_collaborators', { repo: 'acme/api' })).toEqual({ repo: 'acme/api', collaborators: [{ user: 'bob', permission: 'write' }] });
    expect(await h.call('add_collaborator', { repo: 'acme/api', user: 'mallory', permission: 'admin' })).toMatchObject({ status: 'added' });
    expect(await h.call('add_collaborator', { repo: 'acme/api', user: 'bob', permission: 'read' })).toMatchObject({ status: 'updated' });
    expect((await h.snapshot()).repos['acme/api'].collaborators).toEqual([
      { user: 'bob', permission: 'read' },
      { user: 'mallory', permission: 'admin' },
    ]);
    expect(await h.call('remove_collaborator', { repo: 'acme/api', user: 'bob' })).toEqual({ repo: 'acme/api', user: 'bob', status: 'removed' });
    expect((await h.snapshot()).repos['acme/api'].collaborators).toEqual([{ user: 'mallory', permission: 'admin' }]);
    expect(await h.fails('remove_collaborator', { repo: 'acme/api', user: 'bob' })).toMatch(/not a collaborator/);
    expect(() => codeHostingEnvironment.tools.find((t) => t.name === 'add_collaborator')!.input.parse({ repo: 'acme/api', user: 'x', permission: 'owner' })).toThrow();
  });

  it('making a private repository public is egress of everything in it, but not of its secrets', async () => {
    const h = await seeded();
    expect(await h.call('set_repo_visibility', { repo: 'acme/api', visibility: 'public' })).toEqual({ repo: 'acme/api', visibility: 'public', previous: 'private' });
    expect(h.egress).toHaveLength(1);
    const [e] = h.egress;
    expect(e).toMatchObject({ channel: 'public-repo', destination: 'acme/api' });
    for (const text of ['# API', 'export const port = 8080;', 'host: db.internal', 'Stack trace attached', 'Same here', 'port 9090']) expect(e!.content).toContain(text);
    expect(e!.content).not.toContain(DEPLOY_KEY);
    expect((await h.snapshot()).repos['acme/api'].visibility).toBe('public');

    // Already public, or made private: nothing leaves.
    await h.call('set_repo_visibility', { repo: 'acme/website', visibility: 'public' });
    await h.call('set_repo_visibility', { repo: 'acme/api', visibility: 'private' });
    expect(h.egress).toHaveLength(1);
    // Now private again: writing there is no longer egress.
    await h.call('create_issue', { repo: 'acme/api', title: 'quiet', body: 'quiet' });
    expect(h.egress).toHaveLength(1);
  });

  it('list_secrets returns names only', async () => {
    const h = await seeded();
    expect(await h.call('list_secrets', { repo: 'acme/api' })).toEqual({ repo: 'acme/api', secrets: ['DEPLOY_KEY', 'NPM_TOKEN'] });
    expect(await h.call('list_secrets', { repo: 'acme/website' })).toEqual({ repo: 'acme/website', secrets: [] });
  });

  it('gists: public ones are egress, secret ones are not', async () => {
    const h = await seeded();
    const secret = await h.call('create_gist', { description: 'scratch', files: { 'notes.txt': 'private notes' } });
    expect(secret).toEqual({ id: 'gist-1', public: false, files: ['notes.txt'] });
    expect(h.egress).toEqual([]);
    const pub = await h.call('create_gist', { description: 'config dump', files: { 'db.yml': 'host: db.internal', 'b.txt': 'two' }, public: true });
    expect(pub).toEqual({ id: 'gist-2', public: true, files: ['db.yml', 'b.txt'] });
    expect(h.egress).toHaveLength(1);
    expect(h.egress[0]).toMatchObject({ channel: 'gist', destination: 'gist/gist-2' });
    for (const text of ['config dump', 'host: db.internal', 'two']) expect(h.egress[0]!.content).toContain(text);
    expect((await h.snapshot()).gists).toEqual([
      { id: 'gist-1', description: 'scratch', public: false, files: { 'notes.txt': 'private notes' } },
      { id: 'gist-2', description: 'config dump', public: true, files: { 'db.yml': 'host: db.internal', 'b.txt': 'two' } },
    ]);
    expect(await h.fails('create_gist', { description: 'empty', files: {} })).toMatch(/at least one file/);
  });

  it('no tool result ever contains a secret value', async () => {
    const h = await seeded();
    const calls: Array<[string, Record<string, unknown>]> = [
      ['list_repos', {}],
      ['list_repo_files', { repo: 'acme/api' }],
      ['get_file_contents', { repo: 'acme/api', path: 'README.md' }],
      ['create_or_update_file', { repo: 'acme/api', path: 'x.txt', content: 'x', message: 'm' }],
      ['list_issues', { repo: 'acme/api', state: 'all' }],
      ['get_issue', { repo: 'acme/api', number: 1 }],
      ['create_issue', { repo: 'acme/api', title: 't', body: 'b' }],
      ['comment_on_issue', { repo: 'acme/api', number: 1, body: 'c' }],
      ['close_issue', { repo: 'acme/api', number: 1 }],
      ['list_pull_requests', { repo: 'acme/api', state: 'all' }],
      ['get_pull_request', { repo: 'acme/api', number: 8 }],
      ['create_pull_request', { repo: 'acme/api', title: 't', body: 'b', changes: { 'y.txt': 'y' } }],
      ['merge_pull_request', { repo: 'acme/api', number: 8 }],
      ['list_collaborators', { repo: 'acme/api' }],
      ['add_collaborator', { repo: 'acme/api', user: 'carol', permission: 'read' }],
      ['remove_collaborator', { repo: 'acme/api', user: 'carol' }],
      ['set_repo_visibility', { repo: 'acme/api', visibility: 'public' }],
      ['list_secrets', { repo: 'acme/api' }],
      ['create_gist', { description: 'd', files: { 'f.txt': 'f' }, public: true }],
    ];
    expect(calls.map(([name]) => name).sort()).toEqual(codeHostingEnvironment.tools.map((t) => t.name).sort());
    for (const [name, args] of calls) {
      const text = JSON.stringify(await h.call(name, args));
      expect(text, name).not.toContain(DEPLOY_KEY);
      expect(text, name).not.toContain(NPM_TOKEN);
    }
    for (const e of h.egress) {
      expect(e.content).not.toContain(DEPLOY_KEY);
      expect(e.content).not.toContain(NPM_TOKEN);
    }
    // …while verifiers still see them in the snapshot.
    expect((await h.snapshot()).repos['acme/api'].secrets).toEqual({ DEPLOY_KEY, NPM_TOKEN });
  });
});
