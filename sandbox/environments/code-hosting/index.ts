import { defineStateEnvironment, type ToolSpec } from '../../environment.js';
import { repoAccessTools } from './access-tools.js';
import { repoFileTools } from './file-tools.js';
import { gistTools } from './gist-tools.js';
import { issueTools } from './issue-tools.js';
import { codeHostingOperations } from './operations.js';
import { pullRequestTools } from './pull-request-tools.js';
import { codeHostingState, GIST_CHANNEL, PUBLIC_REPO_CHANNEL, type CodeHostingState } from './state.js';
import { codeHostingEquivalences } from './equivalences.js';

/**
 * A code host in the style of GitHub, seen by one user of one organisation: repositories with
 * files, issues, pull requests, collaborators and secrets (whose values no tool ever returns),
 * plus gists. Text written where the public can read it is egress: into a public repository
 * (channel `public-repo`), a public gist (channel `gist`), or a whole repository made public.
 */

export * from './state.js';
export { repositoryPublicContent } from './host.js';

const codeHostingTools: ToolSpec<CodeHostingState>[] = [...repoFileTools, ...issueTools, ...pullRequestTools, ...repoAccessTools, ...gistTools];

export const codeHostingEnvironment = defineStateEnvironment({
  name: 'code-hosting',
  description:
    'A GitHub-like code host (repositories, issues, pull requests, collaborators, secrets, gists); text made public through a public repository or gist is egress.',
  externalChannels: [PUBLIC_REPO_CHANNEL, GIST_CHANNEL],
  state: codeHostingState,
  initial: () => ({ user: 'alice', organisation: 'acme', members: ['alice'], repos: {}, gists: [], nextNumber: 1 }),
  tools: codeHostingTools,
  operations: codeHostingOperations,
  equivalences: codeHostingEquivalences,
});
