import type { JsonValue } from '../../../engine/json.js';
import { defineEquivalence, inTwoParts, resultField, type RouteEquivalence, section, splitText } from '../../route-equivalence.js';

/** Other routes to a change of a repository: a pull request merged instead of a commit, a commit instead of a merge. */

interface PullRequestView {
  number: number;
  changes: Record<string, string>;
}

function pullRequestOf(before: Record<string, JsonValue>, repo: unknown, number: unknown): PullRequestView | undefined {
  const repos = section(before, 'code-hosting')?.repos as Record<string, { name?: string; pullRequests?: PullRequestView[] }> | undefined;
  if (!repos || typeof repo !== 'string') return undefined;
  const wanted = repo.toLowerCase().replace(/^.*\//, '');
  const found = Object.entries(repos).find(([key, r]) => key.toLowerCase() === wanted || String(r.name ?? '').toLowerCase() === wanted)?.[1];
  return found?.pullRequests?.find((p) => p.number === Number(number));
}

export const codeHostingEquivalences: RouteEquivalence[] = [
  defineEquivalence({
    name: 'code-hosting/pull-request-merged',
    tool: 'create_or_update_file',
    route: 'the file changed through a pull request that is then merged, instead of a direct commit',
    rewrite: (call) => [
      {
        tool: 'create_pull_request',
        args: { repo: call.args.repo, title: String(call.args.message ?? 'Update'), body: '', changes: { [String(call.args.path)]: call.args.content } },
      },
      (results) => ({ tool: 'merge_pull_request', args: { repo: call.args.repo, number: resultField(results, 0, 'number') } }),
    ],
  }),
  defineEquivalence({
    name: 'code-hosting/commit-instead-of-merge',
    tool: 'merge_pull_request',
    route: "the pull request's files committed directly instead of the pull request merged",
    rewrite(call, { before }) {
      const pr = pullRequestOf(before, call.args.repo, call.args.number);
      if (!pr || Object.keys(pr.changes).length === 0) return undefined;
      return Object.entries(pr.changes).map(([path, content]) => ({
        tool: 'create_or_update_file',
        args: { repo: call.args.repo, path, content, message: `Apply #${pr.number}` },
      }));
    },
  }),
  defineEquivalence({
    name: 'code-hosting/two-comments',
    tool: 'comment_on_issue',
    route: 'the comment posted in two parts',
    rewrite: (call) => inTwoParts(call, 'body', splitText(String(call.args.body ?? ''))),
  }),
];
