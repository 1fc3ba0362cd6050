import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { addCollaborator, cleanFilePaths, fullName, getRepo, operation, takeNumber } from './host.js';
import { collaboratorPermission, repoVisibility, type CodeHostingState } from './state.js';

/** Init-script operations: the organisation, its repositories, issues, pull requests and access. */
export const codeHostingOperations: OperationSpec<CodeHostingState>[] = [
  operation({
    name: 'configure',
    description: 'Set the acting user, the organisation and its members.',
    input: z.object({
      user: z.string().min(1).optional().describe('Username the agent acts as (default alice)'),
      organisation: z.string().min(1).optional().describe('Organisation that owns repositories named without an owner (default acme)'),
      members: z.array(z.string().min(1)).optional().describe('Usernames in the organisation (default ["alice"])'),
    }),
    apply(state, args) {
      if (args.user !== undefined) state.user = args.user;
      if (args.organisation !== undefined) state.organisation = args.organisation;
      if (args.members !== undefined) state.members = [...args.members];
    },
  }),
  operation({
    name: 'create_repo',
    description: 'Create a repository with files, secrets and collaborators.',
    input: z.object({
      name: z.string().min(1).describe('Repository name; without an owner it belongs to the organisation'),
      visibility: repoVisibility.optional().describe('private (default) or public'),
      files: z.record(z.string(), z.string()).optional().describe('path → content'),
      secrets: z.record(z.string(), z.string()).optional().describe('secret name → value (never shown by tools)'),
      collaborators: z
        .array(z.object({ user: z.string().min(1).describe('Username'), permission: collaboratorPermission.describe('read, write or admin') }))
        .optional()
        .describe('People with access'),
    }),
    apply(state, args) {
      const name = fullName(state, args.name);
      if (state.repos[name]) throw new ToolError(`repository ${name} already exists`);
      state.repos[name] = {
        name,
        visibility: args.visibility ?? 'private',
        files: cleanFilePaths(args.files ?? {}),
        issues: [],
        pullRequests: [],
        secrets: { ...(args.secrets ?? {}) },
        collaborators: (args.collaborators ?? []).map((c) => ({ user: c.user, permission: c.permission })),
      };
    },
  }),
  operation({
    name: 'add_issue',
    description: 'Add an issue (with comments) to a repository.',
    input: z.object({
      repo: z.string().min(1).describe('Repository'),
      title: z.string().min(1).describe('Issue title'),
      body: z.string().describe('Issue description'),
      author: z.string().min(1).describe('Username of the author'),
      state: z.enum(['open', 'closed']).optional().describe('open (default) or closed'),
      number: z.int().positive().optional().describe('Issue number (default: the next free number)'),
      comments: z
        .array(
          z.object({
            author: z.string().min(1).describe('Username'),
            body: z.string().describe('Comment text'),
            id: z.string().optional().describe('Stable id'),
          }),
        )
        .optional()
        .describe('Comments, oldest first'),
    }),
    apply(state, args) {
      const repo = getRepo(state, args.repo);
      const number = takeNumber(state, repo, args.number);
      repo.issues.push({
        number,
        title: args.title,
        body: args.body,
        author: args.author,
        state: args.state ?? 'open',
        comments: (args.comments ?? []).map((c, i) => ({ id: c.id ?? `${number}-${i + 1}`, author: c.author, body: c.body })),
      });
    },
  }),
  operation({
    name: 'add_pull_request',
    description: 'Add a pull request proposing file changes to a repository.',
    input: z.object({
      repo: z.string().min(1).describe('Repository'),
      title: z.string().min(1).describe('Pull request title'),
      body: z.string().describe('Pull request description'),
      author: z.string().min(1).describe('Username of the author'),
      head: z.string().optional().describe('Source branch (default <author>/change-<number>)'),
      base: z.string().optional().describe('Target branch (default main)'),
      state: z.enum(['open', 'merged', 'closed']).optional().describe('open (default), merged or closed'),
      number: z.int().positive().optional().describe('Number (default: the next free number)'),
      changes: z.record(z.string(), z.string()).describe('path → complete new content'),
    }),
    apply(state, args) {
      const repo = getRepo(state, args.repo);
      const number = takeNumber(state, repo, args.number);
      const changes = cleanFilePaths(args.changes);
      repo.pullRequests.push({
        number,
        title: args.title,
        body: args.body,
        author: args.author,
        head: args.head ?? `${args.author}/change-${number}`,
        base: args.base ?? 'main',
        state: args.state ?? 'open',
        changes,
      });
    },
  }),
  operation({
    name: 'add_collaborator',
    description: 'Give a user access to a repository.',
    input: z.object({
      repo: z.string().min(1).describe('Repository'),
      user: z.string().min(1).describe('Username'),
      permission: collaboratorPermission.describe('read, write or admin'),
    }),
    apply(state, args) {
      addCollaborator(getRepo(state, args.repo), args.user.trim(), args.permission);
    },
  }),
];
