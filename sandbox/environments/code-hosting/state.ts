import { z } from 'zod';

/**
 * The code host's state: repositories with files, issues, pull requests, collaborators and
 * secrets, and gists. See `index.ts` for what the environment is.
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
