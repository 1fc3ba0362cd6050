import { closeSync, constants, fstatSync, mkdirSync, openSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ToolError } from '../../environment.js';
import { errorCode, type WorkspacePath } from './workspace-paths.js';

/**
 * The workspace's file-system primitives, race-free against symlink flipping (Linux).
 *
 * The workspace is a host directory that a program under test may change while a tool runs: a
 * check of a path string followed by a use of the same string can be redirected in between (a
 * component swapped for a symlink to a host folder). So nothing here uses a multi-component host
 * path after a check. The root is opened once per operation; every component below it is opened
 * through its parent's descriptor as `/proc/self/fd/<dirfd>/<name>` with O_NOFOLLOW, and whatever
 * is done to an entry (open, mkdir, unlink, rename, readlink) is one syscall on such a
 * one-component path. A symlink met on the way is read and its target resolved by us as a
 * workspace path: relative ones against the directory holding it, absolute ones only when they
 * lie inside the workspace root; anything leaving the workspace is refused.
 *
 * Synchronous on purpose: on a tmpfs workspace each syscall takes a microsecond or two, and each
 * asynchronous one would be a round trip through the thread pool costing tens (a read_file is
 * ~8 of them). Opens use O_NONBLOCK, so a FIFO planted in the workspace cannot block the process.
 *
 * Without `/proc/self/fd` (macOS) a directory is named by the host path of the components
 * checked so far: each component is still opened with O_NOFOLLOW, but a component swapped after
 * its check can redirect the later use. That fallback is best effort; the Linux path is the one
 * CI runs and the one that is race-free.
 */

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
const MAX_SYMLINK_HOPS = 40;
/** How often a missing parent is made again when something keeps removing it. */
const MAX_MKDIR_RETRIES = 8;

/** Flags that open a directory component, never through a symlink. */
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
/** Added to every open of a final component: never through a symlink, never blocking on a FIFO, never a controlling tty. */
export const ENTRY_FLAGS = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

/** Whether `/proc/self/fd/<fd>/<name>` names `<name>` in the directory open as `fd` (checked once). */
export const viaProcFd: boolean = probeProcFd();

function probeProcFd(): boolean {
  if (process.platform !== 'linux') return false;
  let fd: number | undefined;
  try {
    fd = openSync('/', O_RDONLY | O_DIRECTORY);
    const opened = fstatSync(fd);
    const named = statSync(`/proc/self/fd/${fd}/.`);
    return opened.ino === named.ino && opened.dev === named.dev;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** An open directory: its descriptor, and (fallback only) the host path it was opened by. */
export interface Dir {
  fd: number;
  host: string;
}

/** The path that names `name` inside `dir` for one syscall. */
export function at(dir: Dir, name: string): string {
  return viaProcFd ? `/proc/self/fd/${dir.fd}/${name}` : `${dir.host}/${name}`;
}

/** The path that names `dir` itself (for readdir). */
export function self(dir: Dir): string {
  return viaProcFd ? `/proc/self/fd/${dir.fd}` : dir.host;
}

/** Opens the directory `name` inside `dir` without following a symlink; throws ELOOP/ENOTDIR when it is none. */
export function openChildDir(dir: Dir, name: string): Dir {
  const p = at(dir, name);
  return { fd: openSync(p, DIR_FLAGS), host: viaProcFd ? '' : p };
}

export function closeDir(dir: Dir): void {
  closeSync(dir.fd);
}

/** The workspace root, open for one operation. */
export class OpenWorkspace {
  readonly dir: Dir;
  private bases: string[] | undefined;

  constructor(readonly root: string) {
    // The root itself may be reached through a symlink (a temp directory that is one): it is the
    // sandbox's, not the agent's, and is followed.
    this.dir = { fd: openSync(root, O_RDONLY | O_DIRECTORY), host: root };
  }

  close(): void {
    closeSync(this.dir.fd);
  }

  /**
   * The components, below the root, of an absolute symlink target that lies inside the workspace
   * (its real root, or the root as configured); undefined when it lies outside. Lexical on the
   * prefix only: any `..` after it is left for the walk, which resolves it physically.
   */
  componentsOf(target: string): string[] | undefined {
    // The real root is only needed here, so it is read only when an absolute link is met.
    this.bases ??= [...new Set([viaProcFd ? readlinkSync(self(this.dir)) : realpathSync(this.root), resolve(this.root)])];
    for (const base of this.bases) {
      if (target === base) return [];
      const prefix = base.endsWith('/') ? base : `${base}/`;
      if (target.startsWith(prefix)) return components(target.slice(prefix.length));
    }
    return undefined;
  }
}

/** Runs `work` with the workspace root open, closing it whatever happens. */
export function withWorkspace<T>(root: string, work: (ws: OpenWorkspace) => T): T {
  const ws = new OpenWorkspace(root);
  try {
    return work(ws);
  } finally {
    ws.close();
  }
}

/** A symlink target's components, without empty ones and `.` (`..` stays: it is resolved physically). */
function components(target: string): string[] {
  return target.split('/').filter((c) => c !== '' && c !== '.');
}

/**
 * Walks a workspace path from the root, one directory descriptor at a time (see the top of the
 * file). `final()` enters every directory but the last component and returns that component's
 * name, to be acted on through `at(walker.dir, name)`; when acting on it meets a symlink,
 * `follow(name)` continues with the link's target.
 */
export class PathWalker {
  /** The directory reached so far (the root's descriptor belongs to the workspace and is never closed here). */
  dir: Dir;
  /** Its components below the root: where `..` goes back to. */
  private names: string[] = [];
  /** What is still to walk, as a stack: the next component is at the end. */
  private pending: string[];
  private hops = 0;
  private mkdirs = 0;

  constructor(
    private readonly ws: OpenWorkspace,
    /** The agent's path: what to walk, and what errors name. */
    private readonly path: WorkspacePath,
    /** Make missing directories on the way (a write's parents). */
    private readonly create = false,
    segments: readonly string[] = path.segments,
  ) {
    this.dir = ws.dir;
    this.pending = segments.toReversed();
  }

  /** Enters the directories on the way; returns the last component (`.` when the path ends at a directory: the root). */
  final(): string {
    return this.walk(true);
  }

  /** Enters every component, the last one too, as a directory. */
  enterAll(): void {
    this.walk(false);
  }

  /**
   * `name` (in `dir`) was met as a symlink: continues with its target and returns true, or
   * returns false when it is no symlink (any more). Throws when the target leaves the workspace
   * or links chain too long.
   */
  follow(name: string): boolean {
    let target: string;
    try {
      target = readlinkSync(at(this.dir, name));
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EINVAL' || code === 'ENOENT') return false;
      throw error;
    }
    this.hop();
    if (target.startsWith('/')) {
      const inside = this.ws.componentsOf(target);
      if (inside === undefined) throw this.escape();
      this.restart(inside);
    } else {
      for (const c of components(target).reverse()) this.pending.push(c);
    }
    return true;
  }

  /** Tries `name` again: it changed between two syscalls (a symlink swapped back). Counts as a hop, so this ends. */
  retry(name: string): void {
    this.hop();
    this.pending.push(name);
  }

  /** Closes the directory reached (not the root). */
  close(): void {
    if (this.dir !== this.ws.dir) closeDir(this.dir);
    this.dir = this.ws.dir;
  }

  private walk(keepLast: boolean): string {
    for (;;) {
      const name = this.pending.pop();
      if (name === undefined) return '.';
      if (name === '..') this.up();
      else if (keepLast && this.pending.length === 0) return name;
      else this.enter(name);
    }
  }

  private enter(name: string): void {
    let next: Dir;
    try {
      next = openChildDir(this.dir, name);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' && this.create && this.mkdirs++ < MAX_MKDIR_RETRIES) {
        try {
          mkdirSync(at(this.dir, name));
        } catch (mkdirError) {
          if (errorCode(mkdirError) !== 'EEXIST') throw mkdirError;
        }
        this.pending.push(name);
        return;
      }
      // O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR (ELOOP on some systems), as on a file.
      if (code === 'ENOTDIR' || code === 'ELOOP') {
        if (this.follow(name)) return;
        if (code === 'ELOOP') return this.retry(name);
      }
      throw error;
    }
    this.close();
    this.dir = next;
    this.names.push(name);
  }

  /** `..`: the walk starts again from the root, down to the parent of where it is. */
  private up(): void {
    if (this.names.length === 0) throw this.escape();
    this.restart(this.names.slice(0, -1));
  }

  /** Back to the root; `prefix` comes before what is still pending. */
  private restart(prefix: string[]): void {
    this.close();
    this.names = [];
    for (let i = prefix.length - 1; i >= 0; i--) this.pending.push(prefix[i]!);
  }

  private hop(): void {
    if (++this.hops > MAX_SYMLINK_HOPS) throw new ToolError(`too many levels of symbolic links: ${this.path.display}`);
  }

  private escape(): ToolError {
    return new ToolError(`path escapes the workspace: ${this.path.input}`);
  }
}

/**
 * Opens the entry at `path`, following symlinks that stay inside the workspace. `open` gets
 * the one-component path and must open it with O_NOFOLLOW (ELOOP on a symlink); what it opened
 * is returned as a `Dir` (a directory or not), the caller's to close.
 */
export function openFollowing(ws: OpenWorkspace, path: WorkspacePath, create: boolean, open: (p: string) => number): Dir {
  const walker = new PathWalker(ws, path, create);
  try {
    for (;;) {
      const name = walker.final();
      const p = at(walker.dir, name);
      try {
        return { fd: open(p), host: viaProcFd ? '' : p };
      } catch (error) {
        if (errorCode(error) !== 'ELOOP') throw error;
        if (!walker.follow(name)) walker.retry(name);
      }
    }
  } finally {
    walker.close();
  }
}

/**
 * Runs `work` on the entry at `path` itself, never followed (deleting or moving a symlink acts
 * on the link), in its parent directory reached as `openFollowing` would. `path` must not be
 * the root: it has no parent.
 */
export function atEntry<T>(ws: OpenWorkspace, path: WorkspacePath, create: boolean, work: (dir: Dir, name: string) => T): T {
  const name = path.segments.at(-1);
  if (name === undefined) throw new ToolError('the workspace root has no parent');
  const walker = new PathWalker(ws, path, create, path.segments.slice(0, -1));
  try {
    walker.enterAll();
    return work(walker.dir, name);
  } finally {
    walker.close();
  }
}
