import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Files under `paths` (files or directories, searched recursively) whose names match `pattern`. */
export async function findFiles(paths: string[], pattern: RegExp, cwd: string): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    const info = await stat(abs);
    if (info.isFile()) {
      out.push(abs);
      continue;
    }
    for (const entry of await readdir(abs, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && pattern.test(entry.name) && !entry.parentPath.includes('node_modules')) out.push(join(entry.parentPath, entry.name));
    }
  }
  return out.sort();
}
