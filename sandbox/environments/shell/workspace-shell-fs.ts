import {
  constants,
  fchmodSync,
  fstatSync,
  futimesSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  type Stats,
} from 'node:fs';
import { posix } from 'node:path';
import type { BufferEncoding, CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from 'just-bash';

// Not re-exported by just-bash's entry point: the shapes its IFileSystem takes, as it declares them.
type ReadFileOptions = { encoding?: BufferEncoding | null };
type WriteFileOptions = { encoding?: BufferEncoding };
type DirentEntry = { name: string; isFile: boolean; isDirectory: boolean; isSymbolicLink: boolean };
import { ToolError } from '../../environment.js';
import { at, atEntry, closeDir, ENTRY_FLAGS, openFollowing, PathWalker, self, withWorkspace, type Dir, type OpenWorkspace } from '../files/workspace-fs.js';
import { readFully, removeTree, writeFully } from '../files/workspace-io.js';
import { errorCode, parseWorkspacePath, type WorkspacePath } from '../files/workspace-paths.js';

/**
 * The simulated shell's view of the workspace (mounted at /workspace), through the same
 * race-free, descriptor-based layer as the files environment (`files/workspace-fs.ts`): every
 * path is walked from the workspace root one component at a time, symlinks are followed only
 * while they stay inside, and what is done to an entry is one syscall on a one-component path.
 * just-bash's own ReadWriteFs resolved a path and then opened it by name — a program writing the
 * workspace could swap a component for a symlink in between and have `cat` read a host file, or a
 * redirect write outside. Writes go straight to the file (no temp files left in the workspace).
 *
 * Errors are the ones just-bash's commands expect (`ENOENT: no such file or directory, open
 * '/x'`), naming the shell's path, never the host's.
 */

const { O_RDONLY, O_WRONLY, O_CREAT, O_TRUNC, O_APPEND, O_EXCL, O_DIRECTORY } = constants;

const DESCRIPTIONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EEXIST: 'file already exists',
  ENOTDIR: 'not a directory',
  EISDIR: 'illegal operation on a directory',
  ENOTEMPTY: 'directory not empty',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many symbolic links encountered',
  EINVAL: 'invalid argument',
  ENAMETOOLONG: 'name too long',
  EXDEV: 'cross-device link not permitted',
};

/**
 * An errno error as the embedded bash interpreter reads it (`code` is `ENOENT`, `EACCES`…): a file
 * system answer to a shell command, shown to the agent — not a Vera error, so not a VeraError.
 */
class ShellFsError extends Error {
  constructor(
    readonly code: string,
    syscall: string,
    path: string,
    detail?: string,
  ) {
    super(`${code}: ${DESCRIPTIONS[code] ?? code.toLowerCase()}${detail ? ` (${detail})` : ''}, ${syscall} '${path}'`);
  }
}

function translate(error: unknown, syscall: string, path: string): Error {
  if (error instanceof ShellFsError) return error;
  if (error instanceof ToolError) {
    // The walker refuses a path (or a link) that leads out of the workspace: to the shell, that is a denial.
    if (/escapes the workspace/.test(error.message)) return new ShellFsError('EACCES', syscall, path, 'it leads out of the workspace');
    if (/too many levels of symbolic links/.test(error.message)) return new ShellFsError('ELOOP', syscall, path);
    if (/name too long/.test(error.message)) return new ShellFsError('ENAMETOOLONG', syscall, path);
    return new ShellFsError('EINVAL', syscall, path, error.message);
  }
  const code = errorCode(error);
  return code ? new ShellFsError(code, syscall, path) : (error as Error);
}

function decode(data: Buffer, options?: ReadFileOptions | BufferEncoding): string {
  const encoding = (typeof options === 'string' ? options : options?.encoding) ?? 'utf8';
  return data.toString(encoding === 'binary' ? 'latin1' : (encoding as globalThis.BufferEncoding));
}

function encode(content: FileContent, options?: WriteFileOptions | BufferEncoding): Buffer {
  if (content instanceof Uint8Array) return Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const encoding = (typeof options === 'string' ? options : options?.encoding) ?? 'utf8';
  return Buffer.from(content, encoding === 'binary' ? 'latin1' : (encoding as globalThis.BufferEncoding));
}

function toFsStat(s: Stats): FsStat {
  return {
    isFile: s.isFile(),
    isDirectory: s.isDirectory(),
    isSymbolicLink: s.isSymbolicLink(),
    mode: s.mode,
    size: s.size,
    mtime: s.mtime,
    dev: s.dev,
    ino: s.ino,
  };
}

export class WorkspaceShellFs implements IFileSystem {
  constructor(private readonly root: string) {}

  /** Runs `work` on the parsed path with the workspace open; errors become the shell's. */
  private run<T>(syscall: string, input: string, work: (ws: OpenWorkspace, path: WorkspacePath) => T): T {
    try {
      const path = parseWorkspacePath(this.root, input);
      return withWorkspace(this.root, (ws) => work(ws, path));
    } catch (error) {
      throw translate(error, syscall, input);
    }
  }

  /** Opens the entry (following links that stay inside) with `flags`, runs `work` on the descriptor, closes it. */
  private withOpen<T>(syscall: string, input: string, flags: number, work: (fd: number) => T, create = false, mode = 0o666): T {
    return this.run(syscall, input, (ws, path) => {
      const opened = openFollowing(ws, path, create, (p) => openSync(p, flags | ENTRY_FLAGS, mode));
      try {
        return work(opened.fd);
      } finally {
        closeDir(opened);
      }
    });
  }

  private readBuffer(input: string): Buffer {
    return this.withOpen('open', input, O_RDONLY, (fd) => {
      const s = fstatSync(fd);
      if (s.isDirectory()) throw new ShellFsError('EISDIR', 'read', input);
      return readFully(fd, s.size);
    });
  }

  async readFile(path: string, options?: ReadFileOptions | BufferEncoding): Promise<string> {
    return decode(this.readBuffer(path), options);
  }

  async readFileBytes(path: string): Promise<never> {
    // just-bash's ByteString: one char per byte (latin1).
    return this.readBuffer(path).toString('latin1') as never;
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    return new Uint8Array(this.readBuffer(path));
  }

  private write(input: string, data: Buffer, append: boolean): void {
    this.run('open', input, (ws, path) => {
      if (path.segments.length === 0) throw new ShellFsError('EISDIR', 'open', input);
      const opened = openFollowing(ws, path, false, (p) => {
        // O_EXCL first: a new file never follows a symlink (EEXIST); an existing one is opened without O_CREAT (ELOOP on a link).
        try {
          return openSync(p, O_WRONLY | O_CREAT | O_EXCL | ENTRY_FLAGS, 0o644);
        } catch (error) {
          if (errorCode(error) !== 'EEXIST') throw error;
        }
        return openSync(p, O_WRONLY | (append ? O_APPEND : O_TRUNC) | ENTRY_FLAGS);
      });
      try {
        const s = fstatSync(opened.fd);
        if (s.isDirectory()) throw new ShellFsError('EISDIR', 'open', input);
        writeFully(opened.fd, data);
      } finally {
        closeDir(opened);
      }
    });
  }

  async writeFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    this.write(path, encode(content, options), false);
  }

  async appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    this.write(path, encode(content, options), true);
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch {
      return false;
    }
  }

  async stat(path: string): Promise<FsStat> {
    try {
      return this.withOpen('stat', path, O_RDONLY, (fd) => toFsStat(fstatSync(fd)));
    } catch (error) {
      // A file the shell may not read (mode 000) still has a status: its own, through its parent.
      if ((error as ShellFsError).code !== 'EACCES' || /leads out/.test((error as Error).message)) throw error;
      return this.lstat(path);
    }
  }

  async lstat(path: string): Promise<FsStat> {
    return this.run('lstat', path, (ws, p) => {
      if (p.segments.length === 0) return toFsStat(fstatSync(ws.dir.fd));
      return atEntry(ws, p, false, (dir, name) => toFsStat(lstatSync(at(dir, name))));
    });
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    this.run('mkdir', path, (ws, p) => {
      if (options?.recursive) {
        const walker = new PathWalker(ws, p, true);
        try {
          walker.enterAll();
        } finally {
          walker.close();
        }
        return;
      }
      if (p.segments.length === 0) throw new ShellFsError('EEXIST', 'mkdir', path);
      atEntry(ws, p, false, (dir, name) => mkdirSync(at(dir, name)));
    });
  }

  private listDir<T>(path: string, work: (dir: Dir) => T): T {
    return this.run('scandir', path, (ws, p) => {
      const opened = openFollowing(ws, p, false, (q) => openSync(q, O_RDONLY | O_DIRECTORY | ENTRY_FLAGS));
      try {
        return work(opened);
      } finally {
        closeDir(opened);
      }
    });
  }

  async readdir(path: string): Promise<string[]> {
    return this.listDir(path, (dir) => readdirSync(self(dir)).sort());
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    return this.listDir(path, (dir) =>
      readdirSync(self(dir), { withFileTypes: true })
        .map((e) => ({ name: e.name, isFile: e.isFile(), isDirectory: e.isDirectory(), isSymbolicLink: e.isSymbolicLink() }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    try {
      this.run('rm', path, (ws, p) => {
        if (p.segments.length === 0) throw new ShellFsError('EPERM', 'rm', path, 'the workspace root');
        atEntry(ws, p, false, (dir, name) => {
          const entry = at(dir, name);
          const s = lstatSync(entry);
          if (!s.isDirectory()) return unlinkSync(entry);
          if (options?.recursive) return removeTree(dir, name);
          rmdirSync(entry);
        });
      });
    } catch (error) {
      if (options?.force && (error as ShellFsError).code === 'ENOENT') return;
      throw error;
    }
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    const s = await this.lstat(src);
    if (s.isSymbolicLink && options?.recursive) return this.symlink(await this.readlink(src), dest);
    const followed = s.isSymbolicLink ? await this.stat(src) : s;
    if (followed.isDirectory) {
      if (!options?.recursive) throw new ShellFsError('EISDIR', 'cp', src);
      await this.mkdir(dest, { recursive: true });
      for (const name of await this.readdir(src)) await this.cp(posix.join(src, name), posix.join(dest, name), options);
      return;
    }
    this.write(dest, this.readBuffer(src), false);
  }

  async mv(src: string, dest: string): Promise<void> {
    this.run('mv', src, (ws, from) => {
      if (from.segments.length === 0) throw new ShellFsError('EPERM', 'mv', src);
      const to = parseWorkspacePath(this.root, dest);
      if (to.segments.length === 0) throw new ShellFsError('EPERM', 'mv', dest);
      atEntry(ws, from, false, (fromDir, fromName) => {
        const source = at(fromDir, fromName);
        lstatSync(source);
        atEntry(ws, to, false, (toDir, toName) => renameSync(source, at(toDir, toName)));
      });
    });
  }

  resolvePath(base: string, path: string): string {
    return posix.resolve(base, path);
  }

  getAllPaths(): string[] {
    return [];
  }

  async chmod(path: string, mode: number): Promise<void> {
    this.withOpen('chmod', path, O_RDONLY, (fd) => fchmodSync(fd, mode));
  }

  async symlink(target: string, linkPath: string): Promise<void> {
    this.run('symlink', linkPath, (ws, p) => {
      if (p.segments.length === 0) throw new ShellFsError('EEXIST', 'symlink', linkPath);
      // The link is made verbatim; following it later is the walker's, which refuses what leaves the workspace.
      atEntry(ws, p, false, (dir, name) => symlinkSync(target, at(dir, name)));
    });
  }

  async link(existingPath: string, newPath: string): Promise<void> {
    this.run('link', existingPath, (ws, from) => {
      const to = parseWorkspacePath(this.root, newPath);
      atEntry(ws, from, false, (fromDir, fromName) => atEntry(ws, to, false, (toDir, toName) => linkSync(at(fromDir, fromName), at(toDir, toName))));
    });
  }

  async readlink(path: string): Promise<string> {
    return this.run('readlink', path, (ws, p) => atEntry(ws, p, false, (dir, name) => readlinkSync(at(dir, name))));
  }

  async realpath(path: string): Promise<string> {
    return this.run('realpath', path, (ws, p) => {
      const opened = openFollowing(ws, p, false, (q) => openSync(q, O_RDONLY | ENTRY_FLAGS));
      try {
        const host = readlinkSync(`/proc/self/fd/${opened.fd}`);
        const real = readlinkSync(self(ws.dir));
        if (host === real) return '/';
        if (!host.startsWith(`${real}/`)) throw new ShellFsError('EACCES', 'realpath', path, 'it leads out of the workspace');
        return host.slice(real.length);
      } finally {
        closeDir(opened);
      }
    });
  }

  async utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    this.withOpen('utimes', path, O_RDONLY, (fd) => futimesSync(fd, atime, mtime));
  }
}
