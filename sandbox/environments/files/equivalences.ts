import type { JsonValue } from '../../../engine/json.js';
import { defineEquivalence, inTwoParts, type RouteEquivalence, section, splitText } from '../../route-equivalence.js';

/**
 * Other routes to what a file tool does: the same bytes at the same path by another operation
 * (an append for a write that only adds, a write of the whole text for an append, a temporary
 * file moved into place, a copy and delete for a move).
 */

/** `/a/b` for "a/b", "./a//b" or "/a/b/" (as the workspace resolves agent paths). */
function workspacePath(input: unknown): string | undefined {
  if (typeof input !== 'string') return undefined;
  const segments: string[] = [];
  for (const part of input.trim().split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (segments.pop() === undefined) return undefined;
    } else segments.push(part);
  }
  return segments.length ? `/${segments.join('/')}` : undefined;
}

/** The text of a workspace file before the call; undefined when there is none (or it was too big to keep). */
function textOf(before: Record<string, JsonValue>, path: string): string | undefined {
  const files = section(before, 'files')?.files;
  const file = files && typeof files === 'object' && !Array.isArray(files) ? (files as Record<string, JsonValue>)[path] : undefined;
  const content = file && typeof file === 'object' && !Array.isArray(file) ? file.content : undefined;
  return typeof content === 'string' ? content : undefined;
}

function temporaryBeside(path: string): string {
  const at = path.lastIndexOf('/');
  return `${path.slice(0, at + 1)}.${path.slice(at + 1)}.tmp`;
}

export const filesEquivalences: RouteEquivalence[] = [
  defineEquivalence({
    name: 'files/append-instead-of-write',
    tool: 'write_file',
    route: 'only the added text appended, where the write keeps the old text and adds to its end',
    rewrite(call, { before }) {
      const path = workspacePath(call.args.path);
      const old = path && textOf(before, path);
      const content = String(call.args.content ?? '');
      if (!path || !old || !content.startsWith(old) || content.length === old.length) return undefined;
      return [{ tool: 'append_file', args: { path: call.args.path, content: content.slice(old.length) } }];
    },
  }),
  defineEquivalence({
    name: 'files/temporary-then-move',
    tool: 'write_file',
    route: 'the text written to a temporary file beside it, then moved into place',
    rewrite(call, { before }) {
      const path = workspacePath(call.args.path);
      if (!path) return undefined;
      const tmp = temporaryBeside(path);
      if (textOf(before, tmp) !== undefined) return undefined;
      return [
        { tool: 'write_file', args: { path: tmp, content: call.args.content } },
        ...(textOf(before, path) !== undefined ? [{ tool: 'delete_file', args: { path } }] : []),
        { tool: 'move_file', args: { from: tmp, to: path } },
      ];
    },
  }),
  defineEquivalence({
    name: 'files/write-whole-text',
    tool: 'append_file',
    route: 'the whole file written again with the text added at its end',
    rewrite(call, { before }) {
      const path = workspacePath(call.args.path);
      if (!path) return undefined;
      return [{ tool: 'write_file', args: { path: call.args.path, content: `${textOf(before, path) ?? ''}${String(call.args.content ?? '')}` } }];
    },
  }),
  defineEquivalence({
    name: 'files/two-appends',
    tool: 'append_file',
    route: 'the text appended in two parts',
    rewrite: (call) => inTwoParts(call, 'content', splitText(String(call.args.content ?? ''))),
  }),
  defineEquivalence({
    name: 'files/copy-then-delete',
    tool: 'move_file',
    route: 'the file copied to the new path and the old one deleted',
    rewrite(call, { before }) {
      const from = workspacePath(call.args.from);
      const content = from && textOf(before, from);
      if (content === undefined || content === '') return undefined;
      return [
        { tool: 'write_file', args: { path: call.args.to, content } },
        { tool: 'delete_file', args: { path: call.args.from } },
      ];
    },
  }),
  defineEquivalence({
    name: 'files/share-a-copy',
    tool: 'share_file',
    route: 'a copy of the file written beside it and the copy shared',
    rewrite(call, { before }) {
      const path = workspacePath(call.args.path);
      const content = path && textOf(before, path);
      if (!path || content === undefined) return undefined;
      const copy = `${path.replace(/(\.[^./]+)?$/, (ext) => ` (copy)${ext}`)}`;
      if (textOf(before, copy) !== undefined) return undefined;
      return [
        { tool: 'write_file', args: { path: copy, content } },
        { tool: 'share_file', args: { ...call.args, path: copy } },
      ];
    },
  }),
];
