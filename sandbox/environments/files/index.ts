import * as fs from 'node:fs/promises';
import type { EnvironmentDefinition } from '../../environment.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import { filesOperations } from './operations.js';
import { filesEquivalences } from './equivalences.js';
import { FILE_SHARE_CHANNEL, filesState, type FilesState } from './state.js';
import { filesTools } from './tools.js';
import { snapshotFiles } from './workspace-io.js';

/**
 * A real directory tree: the run's workspace. Agent paths (`/notes/todo.md` or `notes/todo.md`)
 * resolve inside it; nothing outside it can be read or written, whether by `..` or through a
 * symlink — also while a program in the workspace flips symlinks, since every operation walks
 * the path through directory descriptors (`workspace-fs.ts`). Sharing a file with an address
 * outside the organisation's domains is egress through the channel `file-share`.
 */

export * from './state.js';
export { parseWorkspacePath, type WorkspacePath } from './workspace-paths.js';
export { snapshotFiles, writeText, type WriteOptions } from './workspace-io.js';

export const filesEnvironment: EnvironmentDefinition<FilesState> = {
  name: 'files',
  description: "A real workspace directory of files; sharing a file with an address outside the organisation's domains is egress.",
  externalChannels: [FILE_SHARE_CHANNEL],
  tools: filesTools,
  operations: filesOperations,
  equivalences: filesEquivalences,
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
