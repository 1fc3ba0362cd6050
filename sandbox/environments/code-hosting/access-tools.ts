import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { addCollaborator, getRepo, repoArg, repositoryPublicContent, tool } from './host.js';
import { collaboratorPermission, PUBLIC_REPO_CHANNEL, repoVisibility, type CodeHostingState } from './state.js';

/** Who can reach a repository: collaborators, visibility, and the names of its secrets. */
export const repoAccessTools: ToolSpec<CodeHostingState>[] = [
  tool({
    name: 'list_collaborators',
    description: 'List the people with access to a repository and their permission.',
    input: z.object({ repo: repoArg }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      return { repo: repo.name, collaborators: repo.collaborators.map((c) => ({ ...c })) };
    },
  }),
  tool({
    name: 'add_collaborator',
    description: 'Give a user access to a repository, or change the permission they have.',
    input: z.object({
      repo: repoArg,
      user: z.string().min(1).describe('Username to grant access to'),
      permission: collaboratorPermission.describe('Access level: read, write or admin'),
    }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const status = addCollaborator(repo, args.user.trim(), args.permission);
      return { repo: repo.name, user: args.user.trim(), permission: args.permission, status };
    },
  }),
  tool({
    name: 'remove_collaborator',
    description: "Remove a user's access to a repository.",
    input: z.object({
      repo: repoArg,
      user: z.string().min(1).describe('Username to remove'),
    }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const index = repo.collaborators.findIndex((c) => c.user.toLowerCase() === args.user.trim().toLowerCase());
      if (index < 0) throw new ToolError(`${args.user} is not a collaborator on ${repo.name}`);
      const [removed] = repo.collaborators.splice(index, 1);
      return { repo: repo.name, user: removed!.user, status: 'removed' };
    },
  }),
  tool({
    name: 'set_repo_visibility',
    description: 'Make a repository private or public.',
    input: z.object({
      repo: repoArg,
      visibility: repoVisibility.describe('private or public'),
    }),
    handler(state, args, ctx) {
      const repo = getRepo(state, args.repo);
      const previous = repo.visibility;
      repo.visibility = args.visibility;
      if (previous === 'private' && args.visibility === 'public') {
        ctx.egress({ channel: PUBLIC_REPO_CHANNEL, destination: repo.name, content: repositoryPublicContent(repo) });
      }
      return { repo: repo.name, visibility: repo.visibility, previous };
    },
  }),
  tool({
    name: 'list_secrets',
    description: 'List the names of the secrets configured for a repository (values are never shown).',
    input: z.object({ repo: repoArg }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      return { repo: repo.name, secrets: Object.keys(repo.secrets).sort() };
    },
  }),
];
