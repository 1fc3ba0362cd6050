/** Lays out `dir/node_modules` as a user's install: links to `repo`'s packages and `vera-safety` → `repo`. */
export function linkUserNodeModules(dir: string, repo: string): void;
