import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { filePath, getRepo, publish, repoArg, tool } from './host.js';
import type { CodeHostingState } from './state.js';

/** Repositories and their files. */
export const repoFileTools: ToolSpec<CodeHostingState>[] = [
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
];
