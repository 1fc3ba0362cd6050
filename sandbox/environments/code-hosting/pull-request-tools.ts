import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { changesText, cleanFilePaths, getPullRequest, getRepo, inState, numberArg, prSummary, publish, repoArg, takeNumber, tool } from './host.js';
import type { CodeHostingState, PullRequest } from './state.js';

/** Pull requests: proposed file changes, merged into the repository's files. */
export const pullRequestTools: ToolSpec<CodeHostingState>[] = [
  tool({
    name: 'list_pull_requests',
    description: 'List the pull requests of a repository.',
    input: z.object({
      repo: repoArg,
      state: z.enum(['open', 'merged', 'closed', 'all']).optional().describe('Which pull requests: open (default), merged, closed or all'),
    }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const pullRequests = inState(repo.pullRequests, args.state).map(prSummary);
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
      const changes = cleanFilePaths(args.changes);
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
    description: 'Merge an open pull request, applying its file changes to the repository.',
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
];
