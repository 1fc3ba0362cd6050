import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import { ToolError } from '../../environment.js';
import { compareText } from '../shared/collections.js';
import { MAX_FILE_BYTES, type FilesSnapshot, type FilesState } from './state.js';
import { at, atEntry, closeDir, ENTRY_FLAGS, openChildDir, openFollowing, PathWalker, self, withWorkspace, type Dir } from './workspace-fs.js';
import { childDisplay, errorCode, parseWorkspacePath } from './workspace-paths.js';

/**
 * What the files tools do to the workspace — read, write, list, search, delete, move, snapshot —
 * each through directory descriptors (`workspace-fs.ts`), with errors the agent can read: they
 * name workspace paths, never host ones.
 */

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_TRUNC, O_APPEND } = constants;

/** Runs file-system work, turning its failures into errors the agent can read (`agentError`). */
export function fsCall<T>(display: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw agentError(display, error);
  }
}

/**
 * A failure as the agent may see it: the workspace path `display` and what went wrong, never
 * the host path the syscall saw. ToolErrors and errors without an errno (bugs) stay as they are.
 */
export function agentError(display: string, error: unknown): unknown {
  if (error instanceof ToolError) return error;
  const code = errorCode(error);
  switch (code) {
    case undefined:
      return error;
    case 'ENOENT':
      return new ToolError(`no such file or directory: ${display}`);
    case 'EISDIR':
      return new ToolError(`is a directory: ${display}`);
    case 'ENOTDIR':
      return new ToolError(`not a directory: ${display}`);
    case 'EEXIST':
      return new ToolError(`already exists: ${display}`);
    case 'ENOTEMPTY':
      return new ToolError(`directory not empty: ${display} (use recursive: true)`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`permission denied: ${display}`);
    case 'EINVAL':
      return new ToolError(`invalid operation on ${display}`);
    case 'ELOOP':
      return new ToolError(`too many levels of symbolic links: ${display}`);
    case 'ENAMETOOLONG':
      return new ToolError(`name too long: ${display}`);
    case 'ENXIO':
      return new ToolError(`not a regular file: ${display}`);
    default: {
      // Node's message is "<CODE>: <what>, <syscall> '<host path>'": only <what> is kept.
      const what = /^[A-Z0-9]+: ([^,]+)/.exec((error as Error).message)?.[1] ?? code;
      return new ToolError(`${what}: ${display}`);
    }
  }
}

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface WalkEntry {
  /** Workspace path. */
  path: string;
  name: string;
  type: EntryType;
}

function direntType(entry: Dirent): EntryType {
  return entry.isSymbolicLink() ? 'symlink' : entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : 'other';
}

function statType(stat: Stats): EntryType {
  return stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : 'other';
}

/** An entry that changed between readdir and the next syscall on it (removed, or swapped for a symlink or a file). */
function changedMeanwhile(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENXIO';
}

/**
 * Every entry below `dir` (shown as `display`), sorted, a directory before its contents; never
 * follows a symlink (it is an entry of type `symlink`). `visit` gets each entry with the directory
 * holding it and stops the walk by returning false.
 */
export function walk(dir: Dir, display: string, recursive: boolean, visit: (entry: WalkEntry, parent: Dir) => boolean | void): boolean {
  const entries = fsCall(display, () => readdirSync(self(dir), { withFileTypes: true }));
  entries.sort((a, b) => compareText(a.name, b.name));
  for (const dirent of entries) {
    const entry: WalkEntry = { path: childDisplay(display, dirent.name), name: dirent.name, type: direntType(dirent) };
    if (visit(entry, dir) === false) return false;
    if (!recursive || entry.type !== 'directory') continue;
    let child: Dir;
    try {
      child = openChildDir(dir, dirent.name);
    } catch (error) {
      if (changedMeanwhile(error)) continue;
      throw agentError(entry.path, error);
    }
    try {
      if (!walk(child, entry.path, true, visit)) return false;
    } finally {
      closeDir(child);
    }
  }
  return true;
}

export function readFully(fd: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, done);
    if (n === 0) break;
    done += n;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

export function writeFully(fd: number, data: Buffer): void {
  for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done);
}

interface TextRead {
  content: string;
  size: number;
  truncated: boolean;
}

/** Reads the open file: at most MAX_FILE_BYTES of it, and nothing but regular files. */
function readOpen(fd: number, display: string): TextRead {
  const stat = fstatSync(fd);
  if (stat.isDirectory()) throw new ToolError(`is a directory: ${display}`);
  if (!stat.isFile()) throw new ToolError(`not a regular file: ${display}`);
  const content = readFully(fd, Math.min(stat.size, MAX_FILE_BYTES)).toString('utf8');
  return { content, size: stat.size, truncated: stat.size > MAX_FILE_BYTES };
}

/** The text of the workspace file `input` (following symlinks that stay inside). */
export function readText(root: string, input: string): TextRead & { path: string } {
  const file = parseWorkspacePath(root, input);
  return fsCall(file.display, () =>
    withWorkspace(root, (ws) => {
      const opened = openFollowing(ws, file, false, (p) => openSync(p, O_RDONLY | ENTRY_FLAGS));
      try {
        return { path: file.display, ...readOpen(opened.fd, file.display) };
      } finally {
        closeDir(opened);
      }
    }),
  );
}

/**
 * The regular file `name` in `dir`, for a walk: its size, and its text when it is at most
 * `maxBytes`; undefined when it is not a regular file (any more — a symlink now is not read).
 */
function readEntry(dir: Dir, name: string, maxBytes: number): { size: number; content?: string } | undefined {
  let fd: number;
  try {
    fd = openSync(at(dir, name), O_RDONLY | ENTRY_FLAGS);
  } catch (error) {
    if (changedMeanwhile(error)) return undefined;
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    if (stat.size > maxBytes) return { size: stat.size };
    return { size: stat.size, content: readFully(fd, stat.size).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}

export interface WriteOptions {
  /** Make the file executable (the shell's init scripts). */
  executable?: boolean;
}

/** Writes or appends to the workspace file `input`, making its parent directories; follows symlinks that stay inside. */
export function writeText(root: string, input: string, content: string, mode: 'write' | 'append', options: WriteOptions = {}) {
  const target = parseWorkspacePath(root, input);
  if (target.segments.length === 0) throw new ToolError(`is a directory: /`);
  const data = Buffer.from(content, 'utf8');
  return fsCall(target.display, () =>
    withWorkspace(root, (ws) => {
      let created = false;
      const existing = mode === 'write' ? O_TRUNC : O_APPEND;
      const file = openFollowing(ws, target, true, (p) => {
        // O_EXCL first: it says whether the file is new without a separate check, and never
        // follows a symlink (EEXIST), like the open without O_CREAT (ELOOP) after it.
        try {
          const fd = openSync(p, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | ENTRY_FLAGS, options.executable ? 0o777 : 0o666);
          created = true;
          return fd;
        } catch (error) {
          if (errorCode(error) !== 'EEXIST') throw error;
        }
        return openSync(p, O_WRONLY | existing | ENTRY_FLAGS);
      });
      try {
        let before = 0;
        if (!created) {
          const stat = fstatSync(file.fd);
          if (!stat.isFile()) throw new ToolError(`not a regular file: ${target.display}`);
          before = mode === 'append' ? stat.size : 0;
        }
        writeFully(file.fd, data);
        if (options.executable) fchmodSync(file.fd, 0o755);
        return { path: target.display, size: before + data.length, created };
      } finally {
        closeDir(file);
      }
    }),
  );
}

const MAX_LISTED = 500;

export interface ListedEntry {
  path: string;
  type: EntryType;
  size?: number;
}

/** The entries of the workspace directory `input` (itself, when it is a file), at most MAX_LISTED of them. */
export function listFiles(root: string, input: string, recursive: boolean): { path: string; entries: ListedEntry[]; truncated?: true; total?: number } {
  const target = parseWorkspacePath(root, input);
  return fsCall(target.display, () =>
    withWorkspace(root, (ws) => {
      const dir = openFollowing(ws, target, false, (p) => openSync(p, O_RDONLY | ENTRY_FLAGS));
      try {
        const stat = fstatSync(dir.fd);
        if (!stat.isDirectory()) return { path: target.display, entries: [{ path: target.display, type: statType(stat), size: stat.size }] };
        const entries: ListedEntry[] = [];
        let total = 0;
        walk(dir, target.display, recursive, (entry, parent) => {
          // Past the limit, entries are only counted: no lstat for sizes nobody sees.
          if (++total > MAX_LISTED) return;
          if (entry.type !== 'file') return void entries.push({ path: entry.path, type: entry.type });
          const file = lstatSync(at(parent, entry.name), { throwIfNoEntry: false });
          if (!file) return void total--;
          entries.push(file.isFile() ? { path: entry.path, type: 'file', size: file.size } : { path: entry.path, type: statType(file) });
        });
        return { path: target.display, entries, ...(total > MAX_LISTED ? { truncated: true as const, total } : {}) };
      } finally {
        closeDir(dir);
      }
    }),
  );
}

const MAX_SEARCH_RESULTS = 100;

export interface SearchResult {
  path: string;
  match: 'name' | 'content';
  lines?: Array<{ line: number; text: string }>;
}

/** Workspace files whose name or text contains `query` (case-insensitive), at most MAX_SEARCH_RESULTS. */
export function searchFiles(root: string, query: string): SearchResult[] {
  const q = query.toLowerCase();
  const results: SearchResult[] = [];
  withWorkspace(root, (ws) =>
    walk(ws.dir, '/', true, (entry, parent) => {
      if (results.length >= MAX_SEARCH_RESULTS) return false;
      if (entry.type !== 'file') return;
      if (entry.name.toLowerCase().includes(q)) return void results.push({ path: entry.path, match: 'name' });
      let content: string | undefined;
      try {
        content = readEntry(parent, entry.name, MAX_FILE_BYTES)?.content;
      } catch {
        // An unreadable file is not a match.
      }
      if (!content?.toLowerCase().includes(q)) return;
      const lines = content
        .split('\n')
        .map((text, i) => ({ line: i + 1, text: text.length > 200 ? `${text.slice(0, 199)}…` : text }))
        .filter((l) => l.text.toLowerCase().includes(q))
        .slice(0, 3);
      results.push({ path: entry.path, match: 'content', lines });
    }),
  );
  return results;
}

/**
 * Removes the directory `name` in `dir` and everything in it through descriptors, never by path
 * string (which a swapped directory could redirect): a subdirectory replaced by a symlink
 * meanwhile loses the link, never what it points to.
 */
export function removeTree(dir: Dir, name: string): void {
  let child: Dir;
  try {
    child = openChildDir(dir, name);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR' || code === 'ELOOP') return removeEntry(dir, name);
    throw error;
  }
  try {
    for (const entry of readdirSync(self(child), { withFileTypes: true })) {
      if (entry.isDirectory()) removeTree(child, entry.name);
      else removeEntry(child, entry.name);
    }
  } finally {
    closeDir(child);
  }
  try {
    rmdirSync(at(dir, name));
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return;
    // Emptied, then swapped for a symlink or a file: that goes too.
    if (code === 'ENOTDIR') return removeEntry(dir, name);
    throw error;
  }
}

/** Unlinks `name` in `dir` (a symlink: the link itself); a directory (it became one) is removed as a tree. */
function removeEntry(dir: Dir, name: string): void {
  try {
    unlinkSync(at(dir, name));
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return;
    if (code === 'EISDIR' || (code === 'EPERM' && lstatSync(at(dir, name), { throwIfNoEntry: false })?.isDirectory())) return removeTree(dir, name);
    throw error;
  }
}

/** Deletes the workspace entry `input` itself (a symlink: the link); a directory only when empty or `recursive`. */
export function deleteEntry(root: string, input: string, recursive: boolean): { path: string; deleted: 'file' | 'directory' } {
  const target = parseWorkspacePath(root, input);
  if (target.segments.length === 0) throw new ToolError('refusing to delete the workspace root');
  return fsCall(target.display, () =>
    withWorkspace(root, (ws) =>
      atEntry(ws, target, false, (dir, name) => {
        const p = at(dir, name);
        try {
          unlinkSync(p);
          return { path: target.display, deleted: 'file' as const };
        } catch (error) {
          // unlink on a directory: EISDIR on Linux, EPERM elsewhere.
          const code = errorCode(error);
          if (code !== 'EISDIR' && !(code === 'EPERM' && lstatSync(p).isDirectory())) throw error;
        }
        if (recursive) removeTree(dir, name);
        else rmdirSync(p);
        return { path: target.display, deleted: 'directory' as const };
      }),
    ),
  );
}

/** Moves the workspace entry `fromInput` (a symlink: the link) to `toInput`, which must not exist; makes its parents. */
export function moveEntry(root: string, fromInput: string, toInput: string): { from: string; to: string } {
  const from = parseWorkspacePath(root, fromInput);
  const to = parseWorkspacePath(root, toInput);
  if (from.segments.length === 0 || to.segments.length === 0) throw new ToolError('cannot move the workspace root');
  return fsCall(from.display, () =>
    withWorkspace(root, (ws) =>
      atEntry(ws, from, false, (fromDir, fromName) => {
        const source = at(fromDir, fromName);
        lstatSync(source);
        return fsCall(to.display, () =>
          atEntry(ws, to, true, (toDir, toName) => {
            const destination = at(toDir, toName);
            if (lstatSync(destination, { throwIfNoEntry: false })) throw new ToolError(`already exists: ${to.display}`);
            renameSync(source, destination);
            return { from: from.display, to: to.display };
          }),
        );
      }),
    ),
  );
}

/** Makes the workspace directory `input` and its parents (following symlinks that stay inside). */
export function makeDirectory(root: string, input: string): void {
  const target = parseWorkspacePath(root, input);
  fsCall(target.display, () =>
    withWorkspace(root, (ws) => {
      const walker = new PathWalker(ws, target, true);
      try {
        walker.enterAll();
      } finally {
        walker.close();
      }
    }),
  );
}

/** Makes the symlink `input` (its parents too) pointing at `target`, verbatim. */
export function makeSymlink(root: string, input: string, target: string): void {
  const link = parseWorkspacePath(root, input);
  if (link.segments.length === 0) throw new ToolError(`path escapes the workspace: ${input}`);
  fsCall(link.display, () => withWorkspace(root, (ws) => atEntry(ws, link, true, (dir, name) => symlinkSync(target, at(dir, name)))));
}

/**
 * Regular files in the workspace, keyed by workspace path (symlinks are not followed). Synchronous
 * on purpose: a workspace holds a few small files, and each asynchronous call would be a round
 * trip through the thread pool — the snapshot is taken two or three times a run.
 */
export async function snapshotFiles(state: FilesState): Promise<FilesSnapshot> {
  const files: FilesSnapshot['files'] = {};
  withWorkspace(state.root, (ws) =>
    walk(ws.dir, '/', true, (entry, parent) => {
      if (entry.type !== 'file') return;
      const file = fsCall(entry.path, () => readEntry(parent, entry.name, MAX_FILE_BYTES));
      if (!file) return;
      files[entry.path] = file.content === undefined ? { size: file.size, truncated: true } : { content: file.content, size: file.size };
    }),
  );
  return { files, shares: state.shares.map((s) => ({ ...s })) };
}
