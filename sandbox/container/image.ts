import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let version: string | undefined;

/** This package's version, from its package.json (found upward from this file, in source and in dist). */
export function packageVersion(): string {
  if (version) return version;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'vera-safety' && pkg.version) return (version = pkg.version);
    } catch {
      // not here; keep climbing
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('vera-safety: cannot find the package.json of vera-safety to name the sandbox image');
    dir = parent;
  }
}

/** The image `scripts/build-sandbox-image.sh` and docker/Dockerfile build: `vera-sandbox:<version>`. */
export function defaultSandboxImage(): string {
  return process.env.VERA_SANDBOX_IMAGE ?? `vera-sandbox:${packageVersion()}`;
}
