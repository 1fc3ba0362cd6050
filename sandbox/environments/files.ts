import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import type { JsonObject } from '../../engine/json.js';
import {
  defineOperation,
  defineTool,
  ToolError,
  type EnvironmentDefinition,
  type OperationSpec,
  type ToolSpec,
} from '../environment.js';
import { DEFAULT_DOMAINS, isExternalAddress, normalizeAddress } from './shared/domains.js';

/**
 * A real directory tree: the run's workspace. Agent paths (`/notes/todo.md` or `notes/todo.md`)
 * resolve inside it; nothing outside it can be read or written, whether by `..` or through a
 * symlink. Sharing a file with an address outside the organisation's domains is egress through
 * the channel `file-share`.
 */

export const FILE_SHARE_CHANNEL = 'file-share';

/** Files larger than this are neither returned whole by read_file nor stored in the snapshot. */
export const MAX_FILE_BYTES = 1024 * 1024;

const MAX_LISTED = 500;
const MAX_SEARCH_RESULTS = 100;
const MAX_SYMLINK_HOPS = 40;

export const fileShare = z.object({
  id: z.string(),
  /** Workspace path of the shared file. */
  path: z.string(),
  recipient: z.string(),
  /** The file's content when it was shared. */
  content: z.string(),
});
export type FileShare = z.infer<typeof fileShare>;

export const filesState = z.object({
  /** Host directory that is the workspace's `/`. Not part of the snapshot. */
  root: z.string(),
  domains: z.array(z.string()).default([...DEFAULT_DOMAINS]),
  shares: z.array(fileShare).default([]),
});
export type FilesState = z.infer<typeof filesState>;

export const fileSnapshotEntry = z.union([
  z.object({ content: z.string(), size: z.int() }),
  z.object({ size: z.int(), truncated: z.literal(true) }),
]);
export type FileSnapshotEntry = z.infer<typeof fileSnapshotEntry>;

/** What `snapshot()` returns: regular files keyed by workspace path, and the shares made. */
export interface FilesSnapshot extends JsonObject {
  files: { [path: string]: FileSnapshotEntry };
  shares: FileShare[];
}

// ---------------------------------------------------------------------------------------------
// Paths

export interface ResolvedPath {
  /** Host path (lexical: symlinks not followed). */
  abs: string;
  /** Workspace path as the agent sees it: `/notes/todo.md`, `/` for the root. */
  display: string;
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/**
 * The real path `p` names once every symlink is followed — also when its tail does not exist
 * yet (a file about to be created) and when a symlink dangles (writing through it would create
 * its target).
 */
async function realResolve(p: string, hops = 0): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw new ToolError('too many levels of symbolic links');
  try {
    return await fs.realpath(p);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP') throw new ToolError('too many levels of symbolic links');
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const stat = await fs.lstat(p).catch(() => undefined);
  if (stat?.isSymbolicLink()) {
    const target = await fs.readlink(p);
    return realResolve(path.resolve(path.dirname(p), target), hops + 1);
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  return path.join(await realResolve(parent, hops), path.basename(p));
}

/**
 * Resolves a path given by the agent (or an init script) inside `root`. A leading `/` means the
 * workspace root, so `/etc/passwd` is the workspace's own `etc/passwd`. Refuses, with a
 * ToolError, anything that leaves the workspace: `..` above the root, or a symlink (anywhere on
 * the way, dangling or not) whose real target is outside.
 */
export async function resolveWorkspacePath(root: string, input: string): Promise<ResolvedPath> {
  if (input.includes('\0')) throw new ToolError(`invalid path: ${JSON.stringify(input)}`);
  const relative = input.trim().replace(/^\/+/, '');
  const abs = path.resolve(root, relative);
  if (!isInside(root, abs)) throw new ToolError(`path escapes the workspace: ${input}`);
  const realRoot = await fs.realpath(root);
  const real = await realResolve(abs);
  if (!isInside(realRoot, real)) throw new ToolError(`path escapes the workspace: ${input}`);
  const rel = path.relative(root, abs);
  return { abs, display: `/${rel.split(path.sep).join('/')}` };
}

function displayOf(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel ? `/${rel.split(path.sep).join('/')}` : '/';
}

/** Runs file-system work, turning the usual failures into errors the agent can read (no host paths). */
async function fsCall<T>(display: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ToolError) throw error;
    switch (errorCode(error)) {
      case 'ENOENT':
        throw new ToolError(`no such file or directory: ${display}`);
      case 'EISDIR':
        throw new ToolError(`is a directory: ${display}`);
      case 'ENOTDIR':
        throw new ToolError(`not a directory: ${display}`);
      case 'EEXIST':
        throw new ToolError(`already exists: ${display}`);
      case 'ENOTEMPTY':
        throw new ToolError(`directory not empty: ${display} (use recursive: true)`);
      case 'EACCES':
      case 'EPERM':
        throw new ToolError(`permission denied: ${display}`);
      case 'EINVAL':
        throw new ToolError(`invalid operation on ${display}`);
      case 'ELOOP':
        throw new ToolError(`too many levels of symbolic links: ${display}`);
      default:
        throw error;
    }
  }
}

interface WalkEntry {
  abs: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
}

/** Every entry below `dir`, sorted, without following symlinks. */
async function walk(dir: string, recursive: boolean, into: WalkEntry[] = []): Promise<WalkEntry[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const abs = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) into.push({ abs, type: 'symlink', size: 0 });
    else if (entry.isDirectory()) {
      into.push({ abs, type: 'directory', size: 0 });
      if (recursive) await walk(abs, true, into);
    } else if (entry.isFile()) into.push({ abs, type: 'file', size: (await fs.lstat(abs)).size });
    else into.push({ abs, type: 'other', size: 0 });
  }
  return into;
}

async function readText(abs: string): Promise<{ content: string; size: number; truncated: boolean }> {
  const stat = await fs.stat(abs);
  if (stat.isDirectory()) {
    const error = new Error('EISDIR') as Error & { code: string };
    error.code = 'EISDIR';
    throw error;
  }
  if (stat.size <= MAX_FILE_BYTES) return { content: await fs.readFile(abs, 'utf8'), size: stat.size, truncated: false };
  const handle = await fs.open(abs, 'r');
  try {
    const buffer = Buffer.alloc(MAX_FILE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, MAX_FILE_BYTES, 0);
    return { content: buffer.subarray(0, bytesRead).toString('utf8'), size: stat.size, truncated: true };
  } finally {
    await handle.close();
  }
}

async function exists(abs: string): Promise<boolean> {
  return fs.lstat(abs).then(
    () => true,
    () => false,
  );
}

async function writeText(state: FilesState, input: string, content: string, mode: 'write' | 'append') {
  const target = await resolveWorkspacePath(state.root, input);
  if (target.display === '/') throw new ToolError(`is a directory: /`);
  return fsCall(target.display, async () => {
    const existed = await exists(target.abs);
    await fs.mkdir(path.dirname(target.abs), { recursive: true });
    if (mode === 'write') await fs.writeFile(target.abs, content, 'utf8');
    else await fs.appendFile(target.abs, content, 'utf8');
    const size = (await fs.stat(target.abs)).size;
    return { path: target.display, size, created: !existed };
  });
}

// ---------------------------------------------------------------------------------------------
// Tools

const tool = <I extends z.ZodObject>(spec: ToolSpec<FilesState, I>) => defineTool(spec);
const operation = <I extends z.ZodObject>(spec: OperationSpec<FilesState, I>) => defineOperation(spec);

const pathArg = (what: string) => z.string().describe(`${what}, e.g. /notes/todo.md (relative paths start at the workspace root)`);

const filesTools: ToolSpec<FilesState>[] = [
  tool({
    name: 'list_files',
    description: 'List the files and directories in a workspace directory.',
    input: z.object({
      path: z.string().optional().describe('Directory to list (default: the workspace root /)'),
      recursive: z.boolean().optional().describe('Also list everything in subdirectories (default false)'),
    }),
    async handler(state, args) {
      const dir = await resolveWorkspacePath(state.root, args.path ?? '/');
      return fsCall(dir.display, async () => {
        const stat = await fs.stat(dir.abs);
        if (!stat.isDirectory()) return { path: dir.display, entries: [{ path: dir.display, type: 'file', size: stat.size }] };
        const all = await walk(dir.abs, args.recursive ?? false);
        const entries = all.slice(0, MAX_LISTED).map((e) => ({
          path: displayOf(state.root, e.abs),
          type: e.type,
          ...(e.type === 'file' ? { size: e.size } : {}),
        }));
        return { path: dir.display, entries, ...(all.length > MAX_LISTED ? { truncated: true, total: all.length } : {}) };
      });
    },
  }),
  tool({
    name: 'read_file',
    description: 'Read the text content of a workspace file.',
    input: z.object({ path: pathArg('File to read') }),
    async handler(state, args) {
      const file = await resolveWorkspacePath(state.root, args.path);
      return fsCall(file.display, async () => {
        const { content, size, truncated } = await readText(file.abs);
        return { path: file.display, size, content, ...(truncated ? { truncated: true } : {}) };
      });
    },
  }),
  tool({
    name: 'write_file',
    description: 'Create or overwrite a workspace file with the given text, creating parent directories as needed.',
    input: z.object({
      path: pathArg('File to write'),
      content: z.string().describe('The complete new content of the file'),
    }),
    handler: (state, args) => writeText(state, args.path, args.content, 'write'),
  }),
  tool({
    name: 'append_file',
    description: 'Append text to the end of a workspace file, creating it if it does not exist.',
    input: z.object({
      path: pathArg('File to append to'),
      content: z.string().describe('Text to add at the end of the file'),
    }),
    handler: (state, args) => writeText(state, args.path, args.content, 'append'),
  }),
  tool({
    name: 'delete_file',
    description: 'Delete a workspace file, or a directory when recursive is true.',
    input: z.object({
      path: pathArg('File or directory to delete'),
      recursive: z.boolean().optional().describe('Delete a directory and everything in it (default false: files and empty directories only)'),
    }),
    async handler(state, args) {
      const target = await resolveWorkspacePath(state.root, args.path);
      if (target.display === '/') throw new ToolError('refusing to delete the workspace root');
      return fsCall(target.display, async () => {
        const stat = await fs.lstat(target.abs);
        if (stat.isDirectory()) {
          if (args.recursive) await fs.rm(target.abs, { recursive: true });
          else await fs.rmdir(target.abs);
          return { path: target.display, deleted: 'directory' };
        }
        await fs.unlink(target.abs);
        return { path: target.display, deleted: 'file' };
      });
    },
  }),
  tool({
    name: 'move_file',
    description: 'Move or rename a workspace file or directory; the destination must not exist.',
    input: z.object({
      from: pathArg('Current path'),
      to: pathArg('New path'),
    }),
    async handler(state, args) {
      const from = await resolveWorkspacePath(state.root, args.from);
      const to = await resolveWorkspacePath(state.root, args.to);
      if (from.display === '/' || to.display === '/') throw new ToolError('cannot move the workspace root');
      await fsCall(from.display, () => fs.lstat(from.abs));
      if (await exists(to.abs)) throw new ToolError(`already exists: ${to.display}`);
      return fsCall(to.display, async () => {
        await fs.mkdir(path.dirname(to.abs), { recursive: true });
        await fs.rename(from.abs, to.abs);
        return { from: from.display, to: to.display };
      });
    },
  }),
  tool({
    name: 'search_files',
    description: 'Find workspace files whose name or text content contains the query (case-insensitive).',
    input: z.object({
      query: z.string().min(1).describe('Text to look for in file names and contents'),
    }),
    async handler(state, args) {
      const q = args.query.toLowerCase();
      const results: Array<{ path: string; match: 'name' | 'content'; lines?: Array<{ line: number; text: string }> }> = [];
      for (const entry of await walk(state.root, true)) {
        if (results.length >= MAX_SEARCH_RESULTS) break;
        if (entry.type !== 'file') continue;
        const display = displayOf(state.root, entry.abs);
        if (path.basename(entry.abs).toLowerCase().includes(q)) {
          results.push({ path: display, match: 'name' });
          continue;
        }
        if (entry.size > MAX_FILE_BYTES) continue;
        const content = await fs.readFile(entry.abs, 'utf8').catch(() => '');
        if (!content.toLowerCase().includes(q)) continue;
        const lines = content
          .split('\n')
          .map((text, i) => ({ line: i + 1, text: text.length > 200 ? `${text.slice(0, 199)}…` : text }))
          .filter((l) => l.text.toLowerCase().includes(q))
          .slice(0, 3);
        results.push({ path: display, match: 'content', lines });
      }
      return { query: args.query, count: results.length, results };
    },
  }),
  tool({
    name: 'share_file',
    description: 'Share a workspace file with a person by email address, sending them its current content.',
    input: z.object({
      path: pathArg('File to share'),
      recipient: z.string().describe('Email address of the person to share with'),
    }),
    async handler(state, args, ctx) {
      const recipient = normalizeAddress(args.recipient);
      if (recipient === undefined) throw new ToolError(`not an email address: ${JSON.stringify(args.recipient)}`);
      const file = await resolveWorkspacePath(state.root, args.path);
      const { content } = await fsCall(file.display, () => readText(file.abs));
      const taken = new Set(state.shares.map((s) => s.id));
      let n = state.shares.length + 1;
      while (taken.has(`share-${n}`)) n++;
      const share: FileShare = { id: `share-${n}`, path: file.display, recipient, content };
      state.shares.push(share);
      if (isExternalAddress(recipient, state.domains)) {
        ctx.egress({ channel: FILE_SHARE_CHANNEL, destination: recipient, content: `${file.display}\n${content}` });
      }
      return { id: share.id, path: share.path, recipient, status: 'shared' };
    },
  }),
];

// ---------------------------------------------------------------------------------------------
// Operations

const filesOperations: OperationSpec<FilesState>[] = [
  operation({
    name: 'configure',
    description: 'Set the organisation domains (sharing with other domains is egress).',
    input: z.object({
      domains: z.array(z.string().min(1)).optional().describe('Organisation domains (default ["corp.example"])'),
    }),
    apply(state, args) {
      if (args.domains !== undefined) state.domains = args.domains.map((d) => d.toLowerCase());
    },
  }),
  operation({
    name: 'write',
    description: 'Create a file (and its parent directories) with the given content.',
    input: z.object({
      path: z.string().min(1).describe('Workspace path of the file, e.g. /notes/todo.md'),
      content: z.string().describe('Text content'),
    }),
    async apply(state, args) {
      await writeText(state, args.path, args.content, 'write');
    },
  }),
  operation({
    name: 'mkdir',
    description: 'Create a directory (and its parents).',
    input: z.object({
      path: z.string().min(1).describe('Workspace path of the directory, e.g. /projects/old'),
    }),
    async apply(state, args) {
      const dir = await resolveWorkspacePath(state.root, args.path);
      await fsCall(dir.display, () => fs.mkdir(dir.abs, { recursive: true }));
    },
  }),
  operation({
    name: 'symlink',
    description: 'Create a symbolic link in the workspace; its target is used verbatim and may point outside (to test escape refusal).',
    input: z.object({
      path: z.string().min(1).describe('Workspace path of the link, e.g. /link'),
      target: z.string().min(1).describe('What the link points to: a host path or a path relative to the link'),
    }),
    async apply(state, args) {
      const where = args.path.trim().replace(/^\/+/, '');
      const abs = path.resolve(state.root, where);
      if (!isInside(state.root, abs) || abs === path.resolve(state.root)) throw new ToolError(`path escapes the workspace: ${args.path}`);
      // The link's directory must be inside; the link itself may point anywhere.
      const parent = await resolveWorkspacePath(state.root, path.dirname(`/${where}`));
      const display = displayOf(state.root, abs);
      await fsCall(display, async () => {
        await fs.mkdir(parent.abs, { recursive: true });
        await fs.symlink(args.target, abs);
      });
    },
  }),
];

// ---------------------------------------------------------------------------------------------
// Snapshot and definition

/** Regular files under `root`, keyed by workspace path (symlinks are not followed). */
export async function snapshotFiles(state: FilesState): Promise<FilesSnapshot> {
  const files: FilesSnapshot['files'] = {};
  for (const entry of await walk(state.root, true)) {
    if (entry.type !== 'file') continue;
    const key = displayOf(state.root, entry.abs);
    files[key] = entry.size > MAX_FILE_BYTES ? { size: entry.size, truncated: true } : { content: await fs.readFile(entry.abs, 'utf8'), size: entry.size };
  }
  return { files, shares: state.shares.map((s) => ({ ...s })) };
}

export const filesEnvironment: EnvironmentDefinition<FilesState> = {
  name: 'files',
  description: "A real workspace directory of files; sharing a file with an address outside the organisation's domains is egress.",
  externalChannels: [FILE_SHARE_CHANNEL],
  tools: filesTools,
  operations: filesOperations,
  async create(ctx) {
    await fs.mkdir(ctx.workspace, { recursive: true });
    const state: FilesState = filesState.parse({ root: ctx.workspace, domains: [...DEFAULT_DOMAINS], shares: [] });
    return {
      state,
      snapshot: () => snapshotFiles(state),
      // The workspace belongs to the sandbox, which removes it after the run.
      dispose: () => {},
    };
  },
};
