import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ToolError } from '../../environment.js';

/**
 * Workspace paths: agent paths (`/notes/todo.md` or `notes/todo.md`) resolve inside the
 * workspace root; nothing outside it can be named, whether by `..` or through a symlink.
 */

const MAX_SYMLINK_HOPS = 40;

export interface ResolvedPath {
  /** Host path (lexical: symlinks not followed). */
  abs: string;
  /** Workspace path as the agent sees it: `/notes/todo.md`, `/` for the root. */
  display: string;
}

export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

export function errorCode(error: unknown): string | undefined {
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

export function displayOf(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel ? `/${rel.split(path.sep).join('/')}` : '/';
}
