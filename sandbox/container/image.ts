import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: { root: string; version: string } | undefined;

/** This package's root and version, from its package.json (found upward from this file, in source and in dist). */
function findPackage(): { root: string; version: string } {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'vera-safety' && pkg.version) return (found = { root: dir, version: pkg.version });
    } catch {
      // not here; keep climbing
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('vera-safety: cannot find the package.json of vera-safety');
    dir = parent;
  }
}

export function packageVersion(): string {
  return findPackage().version;
}

/** The directory vera-safety is installed in (the repository root in a checkout): where its scripts are. */
export function packageRoot(): string {
  return findPackage().root;
}

/** The image `scripts/build-sandbox-image.sh` and docker/Dockerfile build: `vera-sandbox:<version>`. */
export function defaultSandboxImage(): string {
  return process.env.VERA_SANDBOX_IMAGE ?? `vera-sandbox:${packageVersion()}`;
}
