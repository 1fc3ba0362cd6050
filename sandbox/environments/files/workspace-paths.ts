import * as path from 'node:path';
import { ToolError } from '../../environment.js';

/**
 * Workspace paths as the agent names them: `/notes/todo.md` or `notes/todo.md`, a leading `/`
 * meaning the workspace root. Parsing is lexical (`..` above the root is refused here); symlinks
 * are resolved later, one component at a time, by `workspace-fs.ts`.
 */

/** Longest host path the kernel takes (PATH_MAX, with its NUL). */
const PATH_MAX = 4096;

export interface WorkspacePath {
  /** What the agent gave, for "path escapes the workspace: <input>". */
  input: string;
  /** Workspace path as the agent sees it: `/notes/todo.md`, `/` for the root. */
  display: string;
  /** Its components, without `.`, `..` or empty ones: `['notes', 'todo.md']`, `[]` for the root. */
  segments: string[];
}

export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/** The display form of a path's components: `/notes/todo.md`, `/` for none. */
export function displayOf(segments: readonly string[]): string {
  return `/${segments.join('/')}`;
}

/** The display form of `name` inside the directory displayed as `parent`. */
export function childDisplay(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

/**
 * Parses a path given by the agent (or an init script). `/etc/passwd` is the workspace's own
 * `etc/passwd`; `..` above the root is refused with a ToolError. A path that, under `root`, would
 * be longer than the kernel takes is refused too: the files would be created one component at a
 * time, but nothing could then reach them by path (the shell, the sandbox's clean-up).
 */
export function parseWorkspacePath(root: string, input: string): WorkspacePath {
  if (input.includes('\0')) throw new ToolError(`invalid path: ${JSON.stringify(input)}`);
  const segments: string[] = [];
  for (const part of input.trim().split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') segments.push(part);
    else if (segments.pop() === undefined) throw new ToolError(`path escapes the workspace: ${input}`);
  }
  const display = displayOf(segments);
  if (root.length + display.length >= PATH_MAX) throw new ToolError(`name too long: ${display}`);
  return { input, display, segments };
}
