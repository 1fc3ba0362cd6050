import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { requireAddress } from '../shared/domains.js';
import { egressToAddress } from '../shared/egress.js';
import { nextSerialId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { FILE_SHARE_CHANNEL, MAX_FILE_BYTES, type FileShare, type FilesState } from './state.js';
import { exists, fsCall, readText, walk, writeText } from './workspace-io.js';
import { displayOf, resolveWorkspacePath } from './workspace-paths.js';

const { tool } = specBuilders<FilesState>();

const MAX_LISTED = 500;
const MAX_SEARCH_RESULTS = 100;

const pathArg = (what: string) => z.string().describe(`${what}, e.g. /notes/todo.md (relative paths start at the workspace root)`);

export const filesTools: ToolSpec<FilesState>[] = [
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
      const recipient = requireAddress(args.recipient);
      const file = await resolveWorkspacePath(state.root, args.path);
      const { content } = await fsCall(file.display, () => readText(file.abs));
      const share: FileShare = { id: nextSerialId(state.shares, 'share'), path: file.display, recipient, content };
      state.shares.push(share);
      egressToAddress(ctx, state.domains, { channel: FILE_SHARE_CHANNEL, destination: recipient, content: `${file.display}\n${content}` });
      return { id: share.id, path: share.path, recipient, status: 'shared' };
    },
  }),
];
