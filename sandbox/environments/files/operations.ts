import { z } from 'zod';
import type { OperationSpec } from '../../environment.js';
import { configureDomainsOperation } from '../shared/domains.js';
import { specBuilders } from '../shared/spec-builders.js';
import type { FilesState } from './state.js';
import { makeDirectory, makeSymlink, writeText } from './workspace-io.js';

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
      writeText(state.root, args.path, args.content, 'write');
    },
  }),
  operation({
    name: 'mkdir',
    description: 'Create a directory (and its parents).',
    input: z.object({
      path: z.string().min(1).describe('Workspace path of the directory, e.g. /projects/old'),
    }),
    async apply(state, args) {
      makeDirectory(state.root, args.path);
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
      // The link's directory must be inside; the link itself may point anywhere.
      makeSymlink(state.root, args.path, args.target);
    },
  }),
];
