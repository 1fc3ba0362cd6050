#!/usr/bin/env node
// Bundles the container sandbox server (sandbox/container/server-main.ts) into one ESM file for
// the sandbox image: `npm run build` ships it as dist/sandbox-server.mjs (so an installed package
// can build the image without its sources), and scripts/build-sandbox-image.sh bundles it from a
// source checkout. sql.js (SQLite in WebAssembly) stays external: it loads its .wasm file from
// beside its own script, so the image build copies the package.
// just-bash stays external too: the simulated shell is never used inside the container.
//
//   node scripts/bundle-sandbox-server.mjs <out-file>
import { build } from 'esbuild';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const out = process.argv[2];
if (!out) {
  console.error('usage: bundle-sandbox-server.mjs <out-file>');
  process.exit(2);
}
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  entryPoints: [resolve(repo, 'sandbox/container/server-main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: resolve(out),
  logLevel: 'warning',
  legalComments: 'none',
  external: ['sql.js', 'just-bash'],
  banner: { js: "import { createRequire as __veraCreateRequire } from 'node:module'; const require = __veraCreateRequire(import.meta.url);" },
});
