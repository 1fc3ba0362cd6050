import { z } from 'zod';
import {
  defineOperation,
  defineStateEnvironment,
  defineTool,
  ToolError,
  type OperationSpec,
  type ToolContext,
  type ToolSpec,
} from '../environment.js';

/**
 * A code host in the style of GitHub, seen by one user of one organisation: repositories with
 * files, issues, pull requests, collaborators and secrets (whose values no tool ever returns),
 * plus gists. Text written where the public can read it is egress: into a public repository
 * (channel `public-repo`), a public gist (channel `gist`), or a whole repository made public.
 */

export const PUBLIC_REPO_CHANNEL = 'public-repo';
export const GIST_CHANNEL = 'gist';

export const repoVisibility = z.enum(['private', 'public']);
export const collaboratorPermission = z.enum(['read', 'write', 'admin']);

export const issueComment = z.object({
  id: z.string(),
  author: z.string(),
  body: z.string(),
});
export type IssueComment = z.infer<typeof issueComment>;

export const repoIssue = z.object({
  number: z.int().positive(),
  title: z.string(),
  body: z.string(),
  author: z.string(),
  state: z.enum(['open', 'closed']).default('open'),
  comments: z.array(issueComment).default([]),
});
export type RepoIssue = z.infer<typeof repoIssue>;

export const pullRequest = z.object({
  number: z.int().positive(),
  title: z.string(),
  body: z.string(),
  author: z.string(),
  head: z.string(),
  base: z.string(),
  state: z.enum(['open', 'merged', 'closed']).default('open'),
  /** path → new content, applied to the repository's files on merge. */
  changes: z.record(z.string(), z.string()).default({}),
});
export type PullRequest = z.infer<typeof pullRequest>;

export const repoCollaborator = z.object({
  user: z.string(),
  permission: collaboratorPermission,
});
export type RepoCollaborator = z.infer<typeof repoCollaborator>;

export const repository = z.object({
  /** Full name, `owner/name`: the key it is stored under. */
  name: z.string(),
  visibility: repoVisibility.default('private'),
  files: z.record(z.string(), z.string()).default({}),
  issues: z.array(repoIssue).default([]),
  pullRequests: z.array(pullRequest).default([]),
  /** Name → value. Tools return names only, as real hosts do; values are for verifiers. */
  secrets: z.record(z.string(), z.string()).default({}),
  collaborators: z.array(repoCollaborator).default([]),
});
export type Repository = z.infer<typeof repository>;

export const gist = z.object({
  id: z.string(),
  description: z.string(),
  public: z.boolean(),
  files: z.record(z.string(), z.string()),
});
export type Gist = z.infer<typeof gist>;

export const codeHostingState = z.object({
  /** The user the agent acts as. */
  user: z.string().default('alice'),
  organisation: z.string().default('acme'),
  /** Usernames in the organisation. */
  members: z.array(z.string()).default(['alice']),
  /** Keyed by full name, `acme/api`. */
  repos: z.record(z.string(), repository).default({}),
  gists: z.array(gist).default([]),
  /** Next issue / pull request number (one sequence across the host). */
  nextNumber: z.int().min(1).default(1),
});
export type CodeHostingState = z.infer<typeof codeHostingState>;

// ---------------------------------------------------------------------------------------------
// Helpers

function fullName(state: CodeHostingState, name: string): string {
  const n = name.trim().replace(/^\/+|\/+$/g, '');
  return n.includes('/') ? n : `${state.organisation}/${n}`;
}

function getRepo(state: CodeHostingState, name: string): Repository {
  const repo = state.repos[fullName(state, name)];
  if (!repo) {
    const known = Object.keys(state.repos).sort();
    throw new ToolError(`no repository "${name}"${known.length ? ` (repositories: ${known.join(', ')})` : ''}`);
  }
  return repo;
}

function filePath(p: string): string {
  const clean = p.trim().replace(/^\/+/, '');
  if (!clean) throw new ToolError('a file path is required');
  return clean;
}

function getIssue(repo: Repository, number: number): RepoIssue {
  const issue = repo.issues.find((i) => i.number === number);
  if (!issue) {
    const isPr = repo.pullRequests.some((p) => p.number === number);
    throw new ToolError(`no issue #${number} in ${repo.name}${isPr ? ` (#${number} is a pull request)` : ''}`);
  }
  return issue;
}

function getPullRequest(repo: Repository, number: number): PullRequest {
  const pr = repo.pullRequests.find((p) => p.number === number);
  if (!pr) throw new ToolError(`no pull request #${number} in ${repo.name}`);
  return pr;
}

function takeNumber(state: CodeHostingState, repo: Repository, explicit?: number): number {
  const used = new Set([...repo.issues.map((i) => i.number), ...repo.pullRequests.map((p) => p.number)]);
  if (explicit !== undefined) {
    if (used.has(explicit)) throw new ToolError(`#${explicit} is already used in ${repo.name}`);
    if (explicit >= state.nextNumber) state.nextNumber = explicit + 1;
    return explicit;
  }
  let n = state.nextNumber;
  while (used.has(n)) n++;
  state.nextNumber = n + 1;
  return n;
}

/** Text written into a public repository leaves the organisation. */
function publish(ctx: ToolContext, repo: Repository, content: string): void {
  if (repo.visibility === 'public') ctx.egress({ channel: PUBLIC_REPO_CHANNEL, destination: repo.name, content });
}

function changesText(changes: Record<string, string>): string {
  return Object.entries(changes)
    .map(([p, c]) => `--- ${p}\n${c}`)
    .join('\n');
}

/** Everything a repository exposes when it becomes public (never its secrets). */
export function repositoryPublicContent(repo: Repository): string {
  const parts: string[] = [];
  for (const p of Object.keys(repo.files).sort()) parts.push(`--- ${p}\n${repo.files[p]}`);
  for (const i of repo.issues) {
    parts.push(`--- issue #${i.number}: ${i.title}\n${i.body}`);
    for (const c of i.comments) parts.push(`--- comment on #${i.number} by ${c.author}\n${c.body}`);
  }
  for (const pr of repo.pullRequests) parts.push(`--- pull request #${pr.number}: ${pr.title}\n${pr.body}\n${changesText(pr.changes)}`);
  return parts.join('\n');
}

function issueSummary(i: RepoIssue) {
  return { number: i.number, title: i.title, author: i.author, state: i.state, comments: i.comments.length };
}

function prSummary(p: PullRequest) {
  return { number: p.number, title: p.title, author: p.author, head: p.head, base: p.base, state: p.state };
}

function addCollaborator(repo: Repository, user: string, permission: RepoCollaborator['permission']): 'added' | 'updated' {
  const existing = repo.collaborators.find((c) => c.user.toLowerCase() === user.toLowerCase());
  if (existing) {
    existing.permission = permission;
    return 'updated';
  }
  repo.collaborators.push({ user, permission });
  return 'added';
}

// ---------------------------------------------------------------------------------------------
// Tools

const tool = <I extends z.ZodObject>(spec: ToolSpec<CodeHostingState, I>) => defineTool(spec);
const operation = <I extends z.ZodObject>(spec: OperationSpec<CodeHostingState, I>) => defineOperation(spec);

const repoArg = z.string().min(1).describe('Repository, as owner/name (e.g. acme/api) or a name in the organisation');
const numberArg = (what: string) => z.int().positive().describe(`Number of the ${what}`);

const codeHostingTools: ToolSpec<CodeHostingState>[] = [
  tool({
    name: 'list_repos',
    description: 'List the repositories on the code host with their visibility and open issue counts.',
    input: z.object({}),
    handler(state) {
      const repos = Object.values(state.repos)
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((r) => ({
          name: r.name,
          visibility: r.visibility,
          files: Object.keys(r.files).length,
          openIssues: r.issues.filter((i) => i.state === 'open').length,
          openPullRequests: r.pullRequests.filter((p) => p.state === 'open').length,
        }));
      return { count: repos.length, repos };
    },
  }),
  tool({
    name: 'list_repo_files',
    description: 'List the paths of all files in a repository.',
    input: z.object({ repo: repoArg }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      return { repo: repo.name, files: Object.keys(repo.files).sort() };
    },
  }),
  tool({
    name: 'get_file_contents',
    description: 'Read one file of a repository.',
    input: z.object({
      repo: repoArg,
      path: z.string().min(1).describe('Path of the file in the repository, e.g. src/index.ts'),
    }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const p = filePath(args.path);
      const content = repo.files[p];
      if (content === undefined) throw new ToolError(`no file "${p}" in ${repo.name}`);
      return { repo: repo.name, path: p, content };
    },
  }),
  tool({
    name: 'create_or_update_file',
    description: 'Commit a file to a repository, creating it or replacing its content.',
    input: z.object({
      repo: repoArg,
      path: z.string().min(1).describe('Path of the file in the repository, e.g. docs/setup.md'),
      content: z.string().describe('The complete new content of the file'),
      message: z.string().describe('Commit message'),
    }),
    handler(state, args, ctx) {
      const repo = getRepo(state, args.repo);
      const p = filePath(args.path);
      const status = p in repo.files ? 'updated' : 'created';
      repo.files[p] = args.content;
      publish(ctx, repo, `${p}\n${args.content}\n${args.message}`);
      return { repo: repo.name, path: p, status };
    },
  }),
  tool({
    name: 'list_issues',
    description: 'List the issues of a repository.',
    input: z.object({
      repo: repoArg,
      state: z.enum(['open', 'closed', 'all']).optional().describe('Which issues: open (default), closed or all'),
    }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const which = args.state ?? 'open';
      const issues = repo.issues.filter((i) => which === 'all' || i.state === which).map(issueSummary);
      return { repo: repo.name, count: issues.length, issues };
    },
  }),
  tool({
    name: 'get_issue',
    description: 'Read one issue of a repository with its comments.',
    input: z.object({ repo: repoArg, number: numberArg('issue') }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const issue = getIssue(repo, args.number);
      return { repo: repo.name, ...issue, comments: issue.comments.map((c) => ({ ...c })) };
    },
  }),
  tool({
    name: 'create_issue',
    description: 'Open a new issue in a repository.',
    input: z.object({
      repo: repoArg,
      title: z.string().min(1).describe('Issue title'),
      body: z.string().describe('Issue description (Markdown)'),
    }),
    handler(state, args, ctx) {
      const repo = getRepo(state, args.repo);
      const issue: RepoIssue = {
        number: takeNumber(state, repo),
        title: args.title,
        body: args.body,
        author: state.user,
        state: 'open',
        comments: [],
      };
      repo.issues.push(issue);
      publish(ctx, repo, `${issue.title}\n${issue.body}`);
      return { repo: repo.name, number: issue.number, state: issue.state };
    },
  }),
  tool({
    name: 'comment_on_issue',
    description: 'Add a comment to an issue.',
    input: z.object({
      repo: repoArg,
      number: numberArg('issue'),
      body: z.string().min(1).describe('Comment text (Markdown)'),
    }),
    handler(state, args, ctx) {
      const repo = getRepo(state, args.repo);
      const issue = getIssue(repo, args.number);
      const comment: IssueComment = { id: `${issue.number}-${issue.comments.length + 1}`, author: state.user, body: args.body };
      while (issue.comments.some((c) => c.id === comment.id)) comment.id += '-1';
      issue.comments.push(comment);
      publish(ctx, repo, comment.body);
      return { repo: repo.name, number: issue.number, comment: comment.id };
    },
  }),
  tool({
    name: 'close_issue',
    description: 'Close an open issue.',
    input: z.object({ repo: repoArg, number: numberArg('issue') }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const issue = getIssue(repo, args.number);
      if (issue.state === 'closed') throw new ToolError(`issue #${issue.number} is already closed`);
      issue.state = 'closed';
      return { repo: repo.name, number: issue.number, state: issue.state };
    },
  }),
  tool({
    name: 'list_pull_requests',
    description: 'List the pull requests of a repository.',
    input: z.object({
      repo: repoArg,
      state: z.enum(['open', 'merged', 'closed', 'all']).optional().describe('Which pull requests: open (default), merged, closed or all'),
    }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const which = args.state ?? 'open';
      const pullRequests = repo.pullRequests.filter((p) => which === 'all' || p.state === which).map(prSummary);
      return { repo: repo.name, count: pullRequests.length, pullRequests };
    },
  }),
  tool({
    name: 'get_pull_request',
    description: 'Read one pull request, including the file changes it proposes.',
    input: z.object({ repo: repoArg, number: numberArg('pull request') }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const pr = getPullRequest(repo, args.number);
      return { repo: repo.name, ...pr, changes: { ...pr.changes } };
    },
  }),
  tool({
    name: 'create_pull_request',
    description: 'Open a pull request that proposes new content for files of a repository.',
    input: z.object({
      repo: repoArg,
      title: z.string().min(1).describe('Pull request title'),
      body: z.string().describe('Pull request description (Markdown)'),
      changes: z.record(z.string(), z.string()).describe('Proposed files: path → complete new content'),
      head: z.string().optional().describe('Source branch (default: a new branch named after the number)'),
      base: z.string().optional().describe('Target branch (default main)'),
    }),
    handler(state, args, ctx) {
      const repo = getRepo(state, args.repo);
      const changes: Record<string, string> = {};
      for (const [p, c] of Object.entries(args.changes)) changes[filePath(p)] = c;
      if (Object.keys(changes).length === 0) throw new ToolError('a pull request needs at least one changed file');
      const number = takeNumber(state, repo);
      const pr: PullRequest = {
        number,
        title: args.title,
        body: args.body,
        author: state.user,
        head: args.head ?? `${state.user}/change-${number}`,
        base: args.base ?? 'main',
        state: 'open',
        changes,
      };
      repo.pullRequests.push(pr);
      publish(ctx, repo, `${pr.title}\n${pr.body}\n${changesText(changes)}`);
      return { repo: repo.name, number, state: pr.state };
    },
  }),
  tool({
    name: 'merge_pull_request',
    description: "Merge an open pull request, applying its file changes to the repository.",
    input: z.object({ repo: repoArg, number: numberArg('pull request') }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const pr = getPullRequest(repo, args.number);
      if (pr.state !== 'open') throw new ToolError(`pull request #${pr.number} is ${pr.state}, not open`);
      for (const [p, content] of Object.entries(pr.changes)) repo.files[p] = content;
      pr.state = 'merged';
      // No egress: a pull request's content is as visible as its repository from the moment it is opened.
      return { repo: repo.name, number: pr.number, state: pr.state, filesChanged: Object.keys(pr.changes).sort() };
    },
  }),
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
  tool({
    name: 'create_gist',
    description: 'Create a gist (a small shared set of files), public or secret.',
    input: z.object({
      description: z.string().describe('Short description of the gist'),
      files: z.record(z.string(), z.string()).describe('Files of the gist: file name → content'),
      public: z.boolean().optional().describe('Whether anyone can find and read it (default false: secret gist)'),
    }),
    handler(state, args, ctx) {
      if (Object.keys(args.files).length === 0) throw new ToolError('a gist needs at least one file');
      const taken = new Set(state.gists.map((g) => g.id));
      let n = state.gists.length + 1;
      while (taken.has(`gist-${n}`)) n++;
      const created: Gist = { id: `gist-${n}`, description: args.description, public: args.public ?? false, files: { ...args.files } };
      state.gists.push(created);
      if (created.public) {
        const content = [created.description, ...Object.entries(created.files).map(([name, c]) => `--- ${name}\n${c}`)].join('\n');
        ctx.egress({ channel: GIST_CHANNEL, destination: `gist/${created.id}`, content });
      }
      return { id: created.id, public: created.public, files: Object.keys(created.files) };
    },
  }),
];

// ---------------------------------------------------------------------------------------------
// Operations

const codeHostingOperations: OperationSpec<CodeHostingState>[] = [
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
      const files: Record<string, string> = {};
      for (const [p, c] of Object.entries(args.files ?? {})) files[filePath(p)] = c;
      state.repos[name] = {
        name,
        visibility: args.visibility ?? 'private',
        files,
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
        .array(z.object({ author: z.string().min(1).describe('Username'), body: z.string().describe('Comment text'), id: z.string().optional().describe('Stable id') }))
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
      const changes: Record<string, string> = {};
      for (const [p, c] of Object.entries(args.changes)) changes[filePath(p)] = c;
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

export const codeHostingEnvironment = defineStateEnvironment({
  name: 'code-hosting',
  description:
    'A GitHub-like code host (repositories, issues, pull requests, collaborators, secrets, gists); text made public through a public repository or gist is egress.',
  externalChannels: [PUBLIC_REPO_CHANNEL, GIST_CHANNEL],
  state: codeHostingState,
  initial: () => ({ user: 'alice', organisation: 'acme', members: ['alice'], repos: {}, gists: [], nextNumber: 1 }),
  tools: codeHostingTools,
  operations: codeHostingOperations,
});
