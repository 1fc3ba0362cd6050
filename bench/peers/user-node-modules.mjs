// A bench project's node_modules as a user's install has it: `vera-safety` is a package in it
// (here a link to this checkout), and the config imports it by name. Vite bundles a config's own
// files but leaves packages to Node: a config that imports Vera by a file path (as the benches did
// until 2026-12-04) had rolldown parse and bundle all of Vera's dist at every start, ~0.6–1 s that no
// user pays. Every other package is a link to this checkout's node_modules, so one Vitest is loaded.
// Usage (from a script): linkUserNodeModules(DIR, REPO)
import { lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

export function linkUserNodeModules(dir, repo) {
  const target = join(dir, 'node_modules');
  // Replaces a link or folder left by an earlier run (possibly of another checkout).
  try {
    lstatSync(target);
    rmSync(target, { recursive: true, force: true });
  } catch {}
  mkdirSync(target);
  const source = join(repo, 'node_modules');
  for (const entry of readdirSync(source)) {
    // Vite's caches (the bundled config, Vitest's results) stay the project's own.
    if (entry === 'vera-safety' || entry === '.vite' || entry === '.vite-temp') continue;
    if (entry.startsWith('@')) {
      mkdirSync(join(target, entry));
      for (const scoped of readdirSync(join(source, entry))) symlinkSync(join(source, entry, scoped), join(target, entry, scoped));
    } else symlinkSync(join(source, entry), join(target, entry));
  }
  symlinkSync(repo, join(target, 'vera-safety'));
}
