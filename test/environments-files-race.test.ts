import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile, realpath, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EnvironmentDefinition } from '../sandbox/environment.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { filesEnvironment } from '../sandbox/environments/files/index.js';
import { isInside } from '../sandbox/environments/files/workspace-paths.js';
import { harness, removeTempDirs, tempDir, type Harness } from './helpers/environment-harness.js';
import { Flipper, stopFlippers, SWAP_LINK } from './helpers/symlink-flipper.js';

/**
 * The files environment against a program that flips symlinks in the workspace while the tools
 * run (a CLI agent with its own shell can): every operation must act on what it checked. The
 * races are real — a separate process flips the links — and a naive check-then-open baseline run
 * against the same flipper shows the probe can catch an escape.
 */

afterEach(async () => {
  // The flippers first: one still running would keep writing into the directories being removed.
  await stopFlippers();
  await removeTempDirs();
});

/**
 * Swaps the directory `dir` for a symlink to `outside` and back, over and over, each state held for
 * ~60 µs so that a deletion walking the tree meets both (errors ignored: the tree is being deleted).
 */
const SWAP_DIR = `
const fs = require('node:fs');
const [dir, aside, outside] = process.argv.slice(1);
const hold = () => { const t = process.hrtime.bigint(); while (process.hrtime.bigint() - t < 60000n); };
process.stdout.write('ready\\n');
for (;;) {
  try { fs.renameSync(dir, aside); } catch {}
  try { fs.symlinkSync(outside, dir); } catch {}
  hold();
  try { fs.unlinkSync(dir); } catch {}
  try { fs.renameSync(aside, dir); } catch {}
  hold();
}`;

const ATTEMPTS = 2000;

/** How the tool calls of a race came out. */
interface Tally {
  attempts: number;
  inside: number;
  refused: number;
  escaped: number;
  other: string[];
}

function tally(): Tally {
  return { attempts: 0, inside: 0, refused: 0, escaped: 0, other: [] };
}

function report(what: string, t: Tally): void {
  const other = t.other.length ? `, other ${t.other.length} (${[...new Set(t.other)].slice(0, 3).join(' | ')})` : '';
  console.log(`${what}: ${t.attempts} attempts, ${t.inside} through the inside folder, ${t.refused} refused, ${t.escaped} escaped${other}`);
}

describe.runIf(process.platform === 'linux')('files environment: symlink flipping races (Linux: the race-free path)', () => {
  /** A workspace with `/flip` flipping between `/inside` and a host folder holding `secret.txt`. */
  async function flipping(): Promise<{ h: Harness; outside: string; insideMarker: string; outsideMarker: string }> {
    const h = await harness(filesEnvironment);
    const outside = await tempDir('vera-outside-');
    const outsideMarker = `OUTSIDE-${Math.random().toString(36).slice(2)}`;
    const insideMarker = `inside-${Math.random().toString(36).slice(2)}`;
    writeFileSync(join(outside, 'secret.txt'), outsideMarker);
    mkdirSync(join(h.workspace, 'inside'));
    writeFileSync(join(h.workspace, 'inside', 'secret.txt'), insideMarker);
    symlinkSync('inside', join(h.workspace, 'flip'));
    await Flipper.start(SWAP_LINK, [join(h.workspace, 'flip'), 'inside', outside]);
    return { h, outside, insideMarker, outsideMarker };
  }

  it(`read_file and write_file through a flipping symlink never reach the host folder (${ATTEMPTS} calls each)`, async () => {
    const { h, outside, insideMarker, outsideMarker } = await flipping();
    const reads = tally();
    for (let i = 0; i < ATTEMPTS; i++) {
      reads.attempts++;
      try {
        const { content } = await h.call('read_file', { path: '/flip/secret.txt' });
        if (content === outsideMarker) reads.escaped++;
        else if (content === insideMarker) reads.inside++;
        else reads.other.push(`content ${content}`);
      } catch (error) {
        if ((error as Error).message === 'path escapes the workspace: /flip/secret.txt') reads.refused++;
        else reads.other.push((error as Error).message);
      }
    }
    const writes = tally();
    for (let i = 0; i < ATTEMPTS; i++) {
      writes.attempts++;
      try {
        await h.call('write_file', { path: `/flip/created-${i}.txt`, content: 'x' });
        writes.inside++;
      } catch (error) {
        if ((error as Error).message === `path escapes the workspace: /flip/created-${i}.txt`) writes.refused++;
        else writes.other.push((error as Error).message);
      }
    }
    writes.escaped = readdirSync(outside).filter((n) => n !== 'secret.txt').length;
    report('protected read_file', reads);
    report('protected write_file', writes);

    expect(reads.escaped).toBe(0);
    expect(writes.escaped).toBe(0);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    // The flipping happened: calls went both ways.
    expect(reads.inside).toBeGreaterThan(0);
    expect(reads.refused).toBeGreaterThan(0);
    expect(writes.inside).toBeGreaterThan(0);
    expect(writes.refused).toBeGreaterThan(0);
    expect(readdirSync(join(h.workspace, 'inside')).filter((n) => n.startsWith('created-'))).toHaveLength(writes.inside);
  });

  it('the probe can fail: a naive check-then-open read escapes through the same flipping symlink', async () => {
    const { h, insideMarker, outsideMarker } = await flipping();
    // The unprotected baseline: what resolveWorkspacePath did before — check the real path, then
    // open the unresolved one. The thread-pool round trip between the two is window enough here.
    const realRoot = await realpath(h.workspace);
    async function naiveRead(input: string): Promise<string> {
      const real = await realpath(join(h.workspace, input));
      if (!isInside(realRoot, real)) throw new Error(`path escapes the workspace: ${input}`);
      return readFile(join(h.workspace, input), 'utf8');
    }
    const reads = tally();
    for (let i = 0; i < ATTEMPTS; i++) {
      reads.attempts++;
      try {
        const content = await naiveRead('/flip/secret.txt');
        if (content === outsideMarker) reads.escaped++;
        else if (content === insideMarker) reads.inside++;
        else reads.other.push(`content ${content}`);
      } catch (error) {
        if ((error as Error).message.startsWith('path escapes the workspace')) reads.refused++;
        else reads.other.push((error as Error).message);
      }
    }
    report('naive read (baseline)', reads);
    expect(reads.escaped).toBeGreaterThan(0);
  });

  it('closes every descriptor it opens, on success and on every kind of failure', async () => {
    const h = await harness(filesEnvironment);
    const outside = await tempDir('vera-outside-');
    const openInto = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          const target = readlinkSync(`/proc/self/fd/${fd}`);
          return target.startsWith(h.workspace) || target.startsWith(outside);
        } catch {
          return false; // the descriptor readdir itself used, closed by now
        }
      }).length;
    await h.op('write', { path: '/a/b/c.txt', content: 'c' });
    await h.op('symlink', { path: '/out', target: outside });
    await h.op('symlink', { path: '/in', target: 'a' });
    await h.op('symlink', { path: '/loop', target: 'loop' });
    for (let i = 0; i < 3; i++) {
      await h.call('read_file', { path: '/in/b/c.txt' });
      await h.call('write_file', { path: `/in/b/new-${i}/d.txt`, content: 'd' });
      await h.call('append_file', { path: '/a/b/c.txt', content: '+' });
      await h.call('list_files', { path: '/', recursive: true });
      await h.call('search_files', { query: 'c' });
      await h.call('move_file', { from: `/a/b/new-${i}`, to: `/moved/${i}` });
      await h.call('delete_file', { path: '/moved', recursive: true });
      await h.snapshot();
      for (const [tool, args] of [
        ['read_file', { path: '/out/x' }],
        ['read_file', { path: '/missing/x' }],
        ['read_file', { path: '/a/b/c.txt/x' }],
        ['read_file', { path: '/loop' }],
        ['read_file', { path: '/a' }],
        ['write_file', { path: '/out/x', content: 'x' }],
        ['list_files', { path: '/out' }],
        ['delete_file', { path: '/a' }],
        ['move_file', { from: '/a', to: '/out/a' }],
      ] as const) {
        await h.fails(tool, args);
      }
    }
    expect(openInto()).toBe(0);
  });

  /**
   * Deletes `/victim` (holding `sub/` with files and `sub/deeper/` with more) up to `iterations`
   * times while `sub` keeps being swapped for a symlink to a host folder holding the same names;
   * after each delete, notes whether the host folder lost files (and puts them back). With
   * `untilLost`, stops at the first loss.
   */
  async function deleteRace(del: (h: Harness) => Promise<unknown>, iterations: number, untilLost = false) {
    const h = await harness(filesEnvironment);
    const outside = await tempDir('vera-outside-');
    const names = Array.from({ length: 20 }, (_, i) => `f${i}.txt`);
    // The same names as the swapped directory: a delete redirected into the host folder finds them.
    const seedOutside = () => {
      mkdirSync(join(outside, 'deeper'), { recursive: true });
      for (const n of names) {
        writeFileSync(join(outside, n), 'keep');
        writeFileSync(join(outside, 'deeper', n), 'keep');
      }
    };
    seedOutside();
    const sub = join(h.workspace, 'victim', 'sub');
    const aside = join(h.workspace, 'aside');
    const flipper = await Flipper.start(SWAP_DIR, [sub, aside, outside]);
    await flipper.pause();
    const counts = { iterations: 0, deleted: 0, refused: 0, lostOutside: 0 };
    for (let i = 0; i < iterations && !(untilLost && counts.lostOutside > 0); i++) {
      counts.iterations++;
      // The flipper is stopped: lay the tree out again, whatever state it was left in.
      for (const p of [sub, aside]) if (lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(p);
      rmSync(join(h.workspace, 'victim'), { recursive: true, force: true });
      rmSync(aside, { recursive: true, force: true });
      mkdirSync(join(sub, 'deeper'), { recursive: true });
      for (const n of names) {
        writeFileSync(join(sub, n), 'workspace');
        writeFileSync(join(sub, 'deeper', n), 'workspace');
      }
      flipper.resume();
      try {
        await del(h);
        counts.deleted++;
      } catch {
        // The flipper put a directory back meanwhile (directory not empty): a refusal, not an escape.
        counts.refused++;
      }
      await flipper.pause();
      const kept = existsSync(join(outside, 'deeper')) ? readdirSync(outside).length + readdirSync(join(outside, 'deeper')).length : 0;
      if (kept !== 2 * names.length + 1) {
        counts.lostOutside++;
        seedOutside();
      }
    }
    return counts;
  }

  it('a recursive delete cannot be redirected by a subdirectory swapped for a symlink to a host folder', async () => {
    const counts = await deleteRace((h) => h.call('delete_file', { path: '/victim', recursive: true }), 150);
    console.log(`protected recursive delete: ${JSON.stringify(counts)}`);
    expect(counts.lostOutside).toBe(0);
    expect(counts.deleted).toBeGreaterThan(0);
  });

  it("the probe can fail: Node's fs.rm (it walks by path string) deletes host files through the swapped subdirectory", async () => {
    // Loses host files in roughly one run in ten here; up to 600 runs make missing it very unlikely.
    const counts = await deleteRace((h) => rm(join(h.workspace, 'victim'), { recursive: true, force: true }), 600, true);
    console.log(`naive fs.rm recursive delete (baseline): ${JSON.stringify(counts)}`);
    expect(counts.lostOutside).toBeGreaterThan(0);
  });
});

describe('files environment: planted symlinks are never followed out', () => {
  async function planted(): Promise<{ h: Harness; outside: string }> {
    const h = await harness(filesEnvironment);
    const outside = await tempDir('vera-outside-');
    writeFileSync(join(outside, 'passwd'), 'root:x:0:0 OUTSIDE');
    mkdirSync(join(outside, 'dir'));
    writeFileSync(join(outside, 'dir', 'inner.txt'), 'OUTSIDE inner');
    await h.op('write', { path: '/notes/todo.md', content: '- buy milk\n' });
    await h.op('write', { path: '/secrets/prod.env', content: 'DB_PASSWORD=hunter2\n' });
    await h.op('symlink', { path: '/out', target: outside });
    await h.op('symlink', { path: '/outfile', target: join(outside, 'passwd') });
    await h.op('symlink', { path: '/rel-out', target: `../${basename(outside)}` });
    await h.op('symlink', { path: '/notes/up', target: '../secrets' });
    await h.op('symlink', { path: '/abs-in', target: join(h.workspace, 'secrets') });
    await h.op('symlink', { path: '/chain', target: 'abs-in' });
    await h.op('symlink', { path: '/self', target: h.workspace });
    await h.op('symlink', { path: '/dangling-in', target: 'notes/from-link.md' });
    return { h, outside };
  }

  function outsideUntouched(outside: string): void {
    expect(readdirSync(outside).sort()).toEqual(['dir', 'passwd']);
    expect(readFileSync(join(outside, 'passwd'), 'utf8')).toBe('root:x:0:0 OUTSIDE');
    expect(readdirSync(join(outside, 'dir'))).toEqual(['inner.txt']);
    expect(readFileSync(join(outside, 'dir', 'inner.txt'), 'utf8')).toBe('OUTSIDE inner');
  }

  it('move_file and append_file refuse symlinks leading out, and moving a link moves the link only', async () => {
    const { h, outside } = await planted();
    for (const [tool, args] of [
      ['move_file', { from: '/notes/todo.md', to: '/out/todo.md' }],
      ['move_file', { from: '/notes/todo.md', to: '/rel-out/todo.md' }],
      ['move_file', { from: '/out/passwd', to: '/stolen' }],
      ['move_file', { from: '/out/dir', to: '/stolen-dir' }],
      ['append_file', { path: '/outfile', content: 'pwned' }],
      ['append_file', { path: '/out/passwd', content: 'pwned' }],
      ['append_file', { path: '/rel-out/passwd', content: 'pwned' }],
      ['append_file', { path: '/out/dir/new.txt', content: 'pwned' }],
    ] as const) {
      expect(await h.fails(tool, args), `${tool} ${JSON.stringify(args)}`).toMatch(/^path escapes the workspace: /);
    }
    // The link itself is a workspace entry: moving it renames the link, never its target.
    expect(await h.call('move_file', { from: '/outfile', to: '/moved-link' })).toEqual({ from: '/outfile', to: '/moved-link' });
    expect(lstatSync(join(h.workspace, 'moved-link')).isSymbolicLink()).toBe(true);
    expect(await h.fails('read_file', { path: '/moved-link' })).toBe('path escapes the workspace: /moved-link');
    expect(await h.fails('move_file', { from: '/notes/todo.md', to: '/out' })).toBe('already exists: /out');
    outsideUntouched(outside);
  });

  it('list_files, search_files and the snapshot do not follow links out (nor in: each file once, at its real path)', async () => {
    const { h, outside } = await planted();
    for (const p of ['/out', '/rel-out', '/out/dir', '/outfile']) expect(await h.fails('list_files', { path: p }), p).toMatch(/^path escapes the workspace: /);
    const all = await h.call('list_files', { path: '/', recursive: true });
    expect(all.entries).toEqual([
      { path: '/abs-in', type: 'symlink' },
      { path: '/chain', type: 'symlink' },
      { path: '/dangling-in', type: 'symlink' },
      { path: '/notes', type: 'directory' },
      { path: '/notes/todo.md', type: 'file', size: 11 },
      { path: '/notes/up', type: 'symlink' },
      { path: '/out', type: 'symlink' },
      { path: '/outfile', type: 'symlink' },
      { path: '/rel-out', type: 'symlink' },
      { path: '/secrets', type: 'directory' },
      { path: '/secrets/prod.env', type: 'file', size: 20 },
      { path: '/self', type: 'symlink' },
    ]);
    expect((await h.call('search_files', { query: 'OUTSIDE' })).count).toBe(0);
    expect((await h.call('search_files', { query: 'hunter2' })).results.map((r: any) => r.path)).toEqual(['/secrets/prod.env']);
    expect(Object.keys((await h.snapshot()).files)).toEqual(['/notes/todo.md', '/secrets/prod.env']);
    outsideUntouched(outside);
  });

  it('delete_file on a link removes the link, never what it points to', async () => {
    const { h, outside } = await planted();
    expect(await h.call('delete_file', { path: '/out' })).toEqual({ path: '/out', deleted: 'file' });
    expect(await h.call('delete_file', { path: '/outfile', recursive: true })).toEqual({ path: '/outfile', deleted: 'file' });
    expect(await h.fails('delete_file', { path: '/rel-out/passwd' })).toBe('path escapes the workspace: /rel-out/passwd');
    expect(await h.fails('delete_file', { path: '/rel-out/dir', recursive: true })).toBe('path escapes the workspace: /rel-out/dir');
    expect(await h.call('delete_file', { path: '/abs-in' })).toEqual({ path: '/abs-in', deleted: 'file' });
    expect((await h.snapshot()).files['/secrets/prod.env']).toBeDefined();
    outsideUntouched(outside);
  });

  it('symlinks that stay inside work for reading, writing, appending and listing (relative, absolute, chained, dangling, the root)', async () => {
    const { h, outside } = await planted();
    for (const p of ['/notes/up/prod.env', '/abs-in/prod.env', '/chain/prod.env', '/self/secrets/prod.env', '/self/self/chain/prod.env']) {
      expect((await h.call('read_file', { path: p })).content, p).toBe('DB_PASSWORD=hunter2\n');
    }
    expect(await h.call('write_file', { path: '/notes/up/new.env', content: 'X=1' })).toEqual({ path: '/notes/up/new.env', size: 3, created: true });
    expect(await h.call('append_file', { path: '/chain/new.env', content: '+2' })).toEqual({ path: '/chain/new.env', size: 5, created: false });
    expect(await h.call('write_file', { path: '/dangling-in', content: 'made through a dangling link' })).toMatchObject({ created: true });
    expect(await h.call('write_file', { path: '/abs-in/deep/er/file.txt', content: 'deep' })).toMatchObject({ created: true });
    const snap = await h.snapshot();
    expect(snap.files['/secrets/new.env']).toEqual({ content: 'X=1+2', size: 5 });
    expect(snap.files['/notes/from-link.md']).toEqual({ content: 'made through a dangling link', size: 28 });
    expect(snap.files['/secrets/deep/er/file.txt']).toEqual({ content: 'deep', size: 4 });
    expect((await h.call('list_files', { path: '/abs-in' })).entries.map((e: any) => e.path)).toEqual(['/abs-in/deep', '/abs-in/new.env', '/abs-in/prod.env']);
    expect((await h.call('list_files', { path: '/self' })).entries.map((e: any) => e.path)).toContain('/self/notes');
    expect(await h.call('read_file', { path: '/self/../notes/todo.md' })).toMatchObject({ content: '- buy milk\n' });
    outsideUntouched(outside);
  });

  it('a FIFO planted in the workspace is refused or skipped, never waited on', async () => {
    const h = await harness(filesEnvironment);
    await h.op('write', { path: '/notes/todo.md', content: 'fifo nearby' });
    execFileSync('mkfifo', [join(h.workspace, 'notes', 'pipe')]);
    expect(await h.fails('read_file', { path: '/notes/pipe' })).toBe('not a regular file: /notes/pipe');
    // No reader on the other end: opening it for writing without blocking fails, and says what it is.
    expect(await h.fails('write_file', { path: '/notes/pipe', content: 'x' })).toBe('not a regular file: /notes/pipe');
    expect((await h.call('list_files', { path: '/notes' })).entries).toContainEqual({ path: '/notes/pipe', type: 'other' });
    expect((await h.call('search_files', { query: 'fifo' })).results.map((r: any) => r.path)).toEqual(['/notes/todo.md']);
    expect(Object.keys((await h.snapshot()).files)).toEqual(['/notes/todo.md']);
  });

  it('refuses a chain of links longer than the hop limit, and a link that climbs out by ".."', async () => {
    const h = await harness(filesEnvironment);
    for (let i = 0; i < 45; i++) await h.op('symlink', { path: `/l${i}`, target: `l${i + 1}` });
    await h.op('write', { path: '/l45', content: 'end' });
    expect(await h.fails('read_file', { path: '/l0' })).toBe('too many levels of symbolic links: /l0');
    expect((await h.call('read_file', { path: '/l10' })).content).toBe('end');
    await h.op('symlink', { path: '/a/b/climb', target: '../../../..' });
    expect(await h.fails('read_file', { path: '/a/b/climb/etc/passwd' })).toBe('path escapes the workspace: /a/b/climb/etc/passwd');
    expect(await h.fails('write_file', { path: '/a/b/climb/x', content: 'x' })).toBe('path escapes the workspace: /a/b/climb/x');
  });
});

describe('files environment: tool errors never show host paths', () => {
  const leaky: EnvironmentDefinition<{ root: string }> = {
    name: 'leaky',
    description: 'A tool whose internal error names host paths.',
    externalChannels: [],
    tools: [
      {
        name: 'leak',
        description: 'Fails with a host path in its message.',
        input: z.object({}),
        handler: (state) => {
          throw new Error(`EIO: i/o error, open '${state.root}/notes/a.txt' (via /proc/self/fd/17/a.txt, root ${state.root})`);
        },
      },
    ],
    operations: [],
    create: async (ctx) => ({ state: { root: ctx.workspace }, snapshot: () => ({}), dispose: () => {} }),
  };

  it('names the workspace path for too-long names, paths under a file, missing and unreadable files; internal errors are scrubbed', async () => {
    const backend = new InProcessBackend({ tmpRoot: await tempDir('vera-ws-'), environments: { leaky } });
    const sandbox = await backend.start({ environments: ['files', 'leaky'], label: 'host-paths' });
    try {
      const root = sandbox.workspace;
      await sandbox.apply({ op: 'files.write', args: { path: '/a.txt', content: 'a' } }, 0);
      const long = `/${'a'.repeat(5000)}`;
      const name300 = `/${'b'.repeat(300)}`;
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['read_file', { path: long }, `name too long: ${long}`],
        ['write_file', { path: long, content: 'x' }, `name too long: ${long}`],
        ['list_files', { path: long }, `name too long: ${long}`],
        ['delete_file', { path: long }, `name too long: ${long}`],
        ['move_file', { from: '/a.txt', to: long }, `name too long: ${long}`],
        // Under PATH_MAX, over the 255 bytes a name may have: the kernel's ENAMETOOLONG.
        ['read_file', { path: name300 }, `name too long: ${name300}`],
        ['write_file', { path: `${name300}/x`, content: 'x' }, `name too long: ${name300}/x`],
        ['read_file', { path: '/a.txt/x' }, 'not a directory: /a.txt/x'],
        ['write_file', { path: '/a.txt/x', content: 'x' }, 'not a directory: /a.txt/x'],
        ['list_files', { path: '/a.txt/x' }, 'not a directory: /a.txt/x'],
        ['delete_file', { path: '/a.txt/x' }, 'not a directory: /a.txt/x'],
        ['read_file', { path: '/missing.txt' }, 'no such file or directory: /missing.txt'],
        ['list_files', { path: '/missing/dir' }, 'no such file or directory: /missing/dir'],
        ['delete_file', { path: '/missing' }, 'no such file or directory: /missing'],
        ['move_file', { from: '/missing', to: '/x' }, 'no such file or directory: /missing'],
        ['share_file', { path: '/missing.txt', recipient: 'bob@corp.example' }, 'no such file or directory: /missing.txt'],
      ];
      // As root, permission bits are not enforced (a chmod 000 file stays readable): that sub-case only runs as another user.
      if (process.getuid?.() !== 0) {
        await sandbox.apply({ op: 'files.write', args: { path: '/locked/secret.txt', content: 's' } }, 1);
        chmodSync(join(root, 'locked', 'secret.txt'), 0o000);
        cases.push(['read_file', { path: '/locked/secret.txt' }, 'permission denied: /locked/secret.txt']);
        cases.push(['write_file', { path: '/locked/secret.txt', content: 'x' }, 'permission denied: /locked/secret.txt']);
      }
      for (const [tool, args, expected] of cases) {
        const outcome = await sandbox.callTool(tool, args);
        const what = `${tool} ${JSON.stringify(args).slice(0, 80)}`;
        expect(outcome.isError, what).toBe(true);
        expect(outcome.error, what).toBe(expected);
        expect(outcome.error, what).not.toContain(root);
        expect(outcome.error, what).not.toContain('/proc/self');
      }
      const leak = await sandbox.callTool('leak', {});
      expect(leak.error).toBe("internal error in leak: EIO: i/o error, open '/notes/a.txt' (via …/a.txt, root /)");
      expect(existsSync(join(root, 'a.txt'))).toBe(true);
    } finally {
      await sandbox.stop();
    }
  });
});
