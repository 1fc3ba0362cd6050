import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { getIssue, getRepo, inState, issueSummary, numberArg, publish, repoArg, takeNumber, tool } from './host.js';
import type { CodeHostingState, IssueComment, RepoIssue } from './state.js';

/** Issues and their comments. */
export const issueTools: ToolSpec<CodeHostingState>[] = [
  tool({
    name: 'list_issues',
    description: 'List the issues of a repository.',
    input: z.object({
      repo: repoArg,
      state: z.enum(['open', 'closed', 'all']).optional().describe('Which issues: open (default), closed or all'),
    }),
    handler(state, args) {
      const repo = getRepo(state, args.repo);
      const issues = inState(repo.issues, args.state).map(issueSummary);
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
];
