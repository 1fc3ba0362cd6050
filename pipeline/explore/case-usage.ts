import { readFile } from 'node:fs/promises';
import type { TreeKind } from '../taxonomy/taxonomy-schema.js';

/**
 * Which taxonomy nodes the project's cases use, so a retraction does not silently delete the rows
 * their ASR is reported in (operations.ts holds such a deletion for confirmation). A node is used by
 * every case whose risk, attack or environment is it or lies under it. Only each document's root
 * `taxonomy:` is read, by its lines (block or flow form) rather than by loading the whole case: the
 * bundled library's 1 900 cases in a fraction of a second, where validating them takes seconds. A
 * case this misses only loses the hold; `vera check` is where a broken file is reported.
 */
export class CaseUsage {
  private readonly paths: Record<TreeKind, string[]> = { risks: [], attacks: [], environments: [] };

  static async of(files: readonly string[]): Promise<CaseUsage> {
    const usage = new CaseUsage();
    for (const file of files) {
      const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n');
      for (const [i, line] of lines.entries()) {
        if (!line.startsWith('taxonomy:')) continue;
        const flow = /^taxonomy:\s*\{(.*)\}\s*$/.exec(line);
        const pairs = flow ? flow[1]!.split(',') : lines.slice(i + 1, i + 4).filter((l) => /^\s+\w+:/.test(l));
        for (const pair of pairs) {
          const m = /^\s*(risk|attack|environment):\s*["']?([\w./-]+)["']?\s*$/.exec(pair);
          if (m) usage.paths[`${m[1]}s` as TreeKind].push(m[2]!);
        }
      }
    }
    return usage;
  }

  /** Cases whose node is `path` or lies under it. */
  usedBy(tree: TreeKind, path: string): number {
    return this.paths[tree].filter((p) => p === path || p.startsWith(`${path}/`)).length;
  }
}
