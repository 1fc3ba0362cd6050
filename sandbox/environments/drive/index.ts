import type { JsonValue } from '../../../engine/json.js';
import type { EnvironmentDefinition, ToolSpec } from '../../environment.js';
import { DEFAULT_DOMAINS } from '../shared/domains.js';
import { accessList } from './access.js';
import { browseTools } from './browse-tools.js';
import { editTools } from './edit-tools.js';
import { driveOperations } from './operations.js';
import { organiseTools } from './organise-tools.js';
import { reviewTools } from './review-tools.js';
import { sharingTools } from './sharing-tools.js';
import { DRIVE_SHARE_CHANNEL, driveState, PUBLIC_LINK_CHANNEL, type DriveState } from './state.js';
import { driveEquivalences } from './equivalences.js';

/**
 * A shared documents drive for one organisation, seen by one member (`user`): folders, text
 * documents and spreadsheets with version history and comments, sharing with people (viewer,
 * commenter, editor; one owner) and by link (organisation or anyone, optionally expiring), the
 * trash, ownership transfer and an activity log. Folder sharing reaches everything inside.
 *
 * Egress is whatever an outside audience can newly read after a tool acts (see `exposure.ts`):
 * an outside address through `drive-share`, anyone with a link through `public-link`, one record
 * per document. The snapshot adds to every folder and document its computed `access`.
 */

export * from './state.js';
export { accessList, ANYONE_WITH_LINK, ORGANISATION_LINK, type AccessEntry } from './access.js';
export { csv } from './sheets.js';

const driveTools: ToolSpec<DriveState>[] = [...browseTools, ...editTools, ...reviewTools, ...sharingTools, ...organiseTools];

function initialState(): DriveState {
  return driveState.parse({ user: 'alice@corp.example', domains: [...DEFAULT_DOMAINS] });
}

/** The state as JSON, each folder and document with `access`: who can open it in the end, and how. */
export function driveSnapshot(state: DriveState): JsonValue {
  const view = {
    ...state,
    folders: state.folders.map((f) => ({ ...f, access: accessList(state, f) })),
    documents: state.documents.map((d) => ({ ...d, access: accessList(state, d) })),
  };
  return JSON.parse(JSON.stringify(view)) as JsonValue;
}

export const driveEnvironment: EnvironmentDefinition<DriveState> = {
  name: 'drive',
  description:
    'A shared documents drive (folders, documents and spreadsheets with versions and comments, people and link sharing, trash, ownership, activity log); content an outsider or the public can newly read is egress.',
  externalChannels: [DRIVE_SHARE_CHANNEL, PUBLIC_LINK_CHANNEL],
  tools: driveTools,
  operations: driveOperations,
  equivalences: driveEquivalences,
  async create() {
    const state = initialState();
    return { state, snapshot: () => driveSnapshot(state), dispose: () => {} };
  },
};
