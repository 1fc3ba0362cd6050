import { z } from 'zod';
import { ToolError, type ToolContext } from '../../environment.js';
import { specBuilders } from '../shared/spec-builders.js';
import { PUBLIC_REPO_CHANNEL, type CodeHostingState, type PullRequest, type RepoCollaborator, type RepoIssue, type Repository } from './state.js';

/** Lookups and rules the code host's tools and operations share. */

export const { tool, operation } = specBuilders<CodeHostingState>();

export const repoArg = z.string().min(1).describe('Repository, as owner/name (e.g. acme/api) or a name in the organisation');
export const numberArg = (what: string) => z.int().positive().describe(`Number of the ${what}`);

export function fullName(state: CodeHostingState, name: string): string {
  const n = name.trim().replace(/^\/+|\/+$/g, '');
  return n.includes('/') ? n : `${state.organisation}/${n}`;
}

export function getRepo(state: CodeHostingState, name: string): Repository {
  const repo = state.repos[fullName(state, name)];
  if (!repo) {
    const known = Object.keys(state.repos).sort();
    throw new ToolError(`no repository "${name}"${known.length ? ` (repositories: ${known.join(', ')})` : ''}`);
  }
  return repo;
}

export function filePath(p: string): string {
  const clean = p.trim().replace(/^\/+/, '');
  if (!clean) throw new ToolError('a file path is required');
  return clean;
}

/** `path → content` with every path cleaned by `filePath`. */
export function cleanFilePaths(files: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, c] of Object.entries(files)) out[filePath(p)] = c;
  return out;
}

export function getIssue(repo: Repository, number: number): RepoIssue {
  const issue = repo.issues.find((i) => i.number === number);
  if (!issue) {
    const isPr = repo.pullRequests.some((p) => p.number === number);
    throw new ToolError(`no issue #${number} in ${repo.name}${isPr ? ` (#${number} is a pull request)` : ''}`);
  }
  return issue;
}

export function getPullRequest(repo: Repository, number: number): PullRequest {
  const pr = repo.pullRequests.find((p) => p.number === number);
  if (!pr) throw new ToolError(`no pull request #${number} in ${repo.name}`);
  return pr;
}

export function takeNumber(state: CodeHostingState, repo: Repository, explicit?: number): number {
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

export function addCollaborator(repo: Repository, user: string, permission: RepoCollaborator['permission']): 'added' | 'updated' {
  const existing = repo.collaborators.find((c) => c.user.toLowerCase() === user.toLowerCase());
  if (existing) {
    existing.permission = permission;
    return 'updated';
  }
  repo.collaborators.push({ user, permission });
  return 'added';
}

/** The items in state `which` (`all`: every item); a list tool's state filter, `open` by default. */
export function inState<T extends { state: string }>(items: T[], which: string | undefined): T[] {
  const wanted = which ?? 'open';
  return items.filter((item) => wanted === 'all' || item.state === wanted);
}

export function issueSummary(i: RepoIssue) {
  return { number: i.number, title: i.title, author: i.author, state: i.state, comments: i.comments.length };
}

export function prSummary(p: PullRequest) {
  return { number: p.number, title: p.title, author: p.author, head: p.head, base: p.base, state: p.state };
}

// ---------------------------------------------------------------------------------------------
// What leaves when text is published

/** Text written into a public repository leaves the organisation. */
export function publish(ctx: ToolContext, repo: Repository, content: string): void {
  if (repo.visibility === 'public') ctx.egress({ channel: PUBLIC_REPO_CHANNEL, destination: repo.name, content });
}

/** One titled part of published text: `--- <title>` on its own line, then the body. */
function section(title: string, body: string): string {
  return `--- ${title}\n${body}`;
}

/** Files as sections, in the order of `paths` (default: the record's own order). */
export function fileSections(files: Record<string, string>, paths: string[] = Object.keys(files)): string[] {
  return paths.map((p) => section(p, files[p]!));
}

export function changesText(changes: Record<string, string>): string {
  return fileSections(changes).join('\n');
}

/** Everything a repository exposes when it becomes public (never its secrets). */
export function repositoryPublicContent(repo: Repository): string {
  const parts: string[] = fileSections(repo.files, Object.keys(repo.files).sort());
  for (const i of repo.issues) {
    parts.push(section(`issue #${i.number}: ${i.title}`, i.body));
    for (const c of i.comments) parts.push(section(`comment on #${i.number} by ${c.author}`, c.body));
  }
  for (const pr of repo.pullRequests) parts.push(section(`pull request #${pr.number}: ${pr.title}`, `${pr.body}\n${changesText(pr.changes)}`));
  return parts.join('\n');
}
