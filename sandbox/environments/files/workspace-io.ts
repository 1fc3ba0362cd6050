import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ToolError } from '../../environment.js';
import { compareText } from '../shared/collections.js';
import { MAX_FILE_BYTES, type FilesSnapshot, type FilesState } from './state.js';
import { displayOf, errorCode, resolveWorkspacePath } from './workspace-paths.js';

/** Reading, writing and walking the workspace, with errors the agent can read (no host paths). */

/** Runs file-system work, turning the usual failures into errors the agent can read (no host paths). */
export async function fsCall<T>(display: string, work: () => Promise<T>): Promise<T> {
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

export interface WalkEntry {
  abs: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
}

/** Every entry below `dir`, sorted, without following symlinks. */
export async function walk(dir: string, recursive: boolean, into: WalkEntry[] = []): Promise<WalkEntry[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => compareText(a.name, b.name));
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

export async function readText(abs: string): Promise<{ content: string; size: number; truncated: boolean }> {
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

export async function exists(abs: string): Promise<boolean> {
  return fs.lstat(abs).then(
    () => true,
    () => false,
  );
}

export async function writeText(state: FilesState, input: string, content: string, mode: 'write' | 'append') {
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

/** Regular files under `root`, keyed by workspace path (symlinks are not followed). */
export async function snapshotFiles(state: FilesState): Promise<FilesSnapshot> {
  const files: FilesSnapshot['files'] = {};
  // Synchronous on purpose: a workspace holds a few small files, and each asynchronous call would
  // be a round trip through the thread pool — the snapshot is taken two or three times a run.
  for (const entry of walkSync(state.root)) {
    if (entry.type !== 'file') continue;
    const key = displayOf(state.root, entry.abs);
    files[key] = entry.size > MAX_FILE_BYTES ? { size: entry.size, truncated: true } : { content: readFileSync(entry.abs, 'utf8'), size: entry.size };
  }
  return { files, shares: state.shares.map((s) => ({ ...s })) };
}

/** `walk(dir, true)`, synchronously. */
function walkSync(dir: string, into: WalkEntry[] = []): WalkEntry[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  entries.sort((a, b) => compareText(a.name, b.name));
  for (const entry of entries) {
    const abs = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) into.push({ abs, type: 'symlink', size: 0 });
    else if (entry.isDirectory()) {
      into.push({ abs, type: 'directory', size: 0 });
      walkSync(abs, into);
    } else if (entry.isFile()) into.push({ abs, type: 'file', size: lstatSync(abs).size });
    else into.push({ abs, type: 'other', size: 0 });
  }
  return into;
}
