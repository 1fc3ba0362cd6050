import { z } from 'zod';
import type { ToolSpec } from '../../environment.js';
import { requireAddress } from '../shared/domains.js';
import { egressToAddress } from '../shared/egress.js';
import { nextSerialId } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { FILE_SHARE_CHANNEL, type FileShare, type FilesState } from './state.js';
import { deleteEntry, listFiles, moveEntry, readText, searchFiles, writeText } from './workspace-io.js';

const { tool } = specBuilders<FilesState>();

const pathArg = (what: string) => z.string().describe(`${what}, e.g. /notes/todo.md (relative paths start at the workspace root)`);

// The workspace is reached synchronously (see workspace-fs.ts); the handlers stay async, so a
// failure is always a rejected promise, never a throw at the call.
export const filesTools: ToolSpec<FilesState>[] = [
  tool({
    name: 'list_files',
    description: 'List the files and directories in a workspace directory.',
    input: z.object({
      path: z.string().optional().describe('Directory to list (default: the workspace root /)'),
      recursive: z.boolean().optional().describe('Also list everything in subdirectories (default false)'),
    }),
    handler: async (state, args) => listFiles(state.root, args.path ?? '/', args.recursive ?? false),
  }),
  tool({
    name: 'read_file',
    description: 'Read the text content of a workspace file.',
    input: z.object({ path: pathArg('File to read') }),
    async handler(state, args) {
      const { path, size, content, truncated } = readText(state.root, args.path);
      return { path, size, content, ...(truncated ? { truncated: true } : {}) };
    },
  }),
  tool({
    name: 'write_file',
    description: 'Create or overwrite a workspace file with the given text, creating parent directories as needed.',
    input: z.object({
      path: pathArg('File to write'),
      content: z.string().describe('The complete new content of the file'),
    }),
    handler: async (state, args) => writeText(state.root, args.path, args.content, 'write'),
  }),
  tool({
    name: 'append_file',
    description: 'Append text to the end of a workspace file, creating it if it does not exist.',
    input: z.object({
      path: pathArg('File to append to'),
      content: z.string().describe('Text to add at the end of the file'),
    }),
    handler: async (state, args) => writeText(state.root, args.path, args.content, 'append'),
  }),
  tool({
    name: 'delete_file',
    description: 'Delete a workspace file, or a directory when recursive is true.',
    input: z.object({
      path: pathArg('File or directory to delete'),
      recursive: z.boolean().optional().describe('Delete a directory and everything in it (default false: files and empty directories only)'),
    }),
    // A symlink is deleted itself, never what it points to; a tree is removed through
    // descriptors, so a directory swapped meanwhile cannot redirect it.
    handler: async (state, args) => deleteEntry(state.root, args.path, args.recursive ?? false),
  }),
  tool({
    name: 'move_file',
    description: 'Move or rename a workspace file or directory; the destination must not exist.',
    input: z.object({
      from: pathArg('Current path'),
      to: pathArg('New path'),
    }),
    handler: async (state, args) => moveEntry(state.root, args.from, args.to),
  }),
  tool({
    name: 'search_files',
    description: 'Find workspace files whose name or text content contains the query (case-insensitive).',
    input: z.object({
      query: z.string().min(1).describe('Text to look for in file names and contents'),
    }),
    async handler(state, args) {
      const results = searchFiles(state.root, args.query);
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
      const file = readText(state.root, args.path);
      const share: FileShare = { id: nextSerialId(state.shares, 'share'), path: file.path, recipient, content: file.content };
      state.shares.push(share);
      egressToAddress(ctx, state.domains, { channel: FILE_SHARE_CHANNEL, destination: recipient, content: `${file.path}\n${file.content}` });
      return { id: share.id, path: share.path, recipient, status: 'shared' };
    },
  }),
];
