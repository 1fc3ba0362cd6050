import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { filesEnvironment, MAX_FILE_BYTES } from '../sandbox/environments/files/index.js';
import { harness, removeTempDirs, tempDir, type Harness } from './helpers/environment-harness.js';

afterEach(removeTempDirs);

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
      expect(await h.call('read_file', { path: join(h.workspace, 'notes/todo.md') }).catch((e: Error) => e.message)).toMatch(/no such file/);
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
