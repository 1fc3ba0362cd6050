import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { configureDomainsOperation } from '../shared/domains.js';
import { specBuilders } from '../shared/spec-builders.js';
import type { FilesState } from './state.js';
import { fsCall, writeText } from './workspace-io.js';
import { displayOf, isInside, resolveWorkspacePath } from './workspace-paths.js';

const { operation } = specBuilders<FilesState>();

/** Init-script operations: the organisation's domains, and the workspace's files, directories and links. */
export const filesOperations: OperationSpec<FilesState>[] = [
  configureDomainsOperation('Set the organisation domains (sharing with other domains is egress).'),
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
