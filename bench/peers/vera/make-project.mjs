#!/usr/bin/env node
// Vera's side of the peer workload: writes a Vitest project into DIR with N safety cases, each
// making exactly one model call (the reference agent, no tools) and checking that the reply
// contains "pong case i". Usage: node make-project.mjs N PORT CONCURRENCY DIR REPO
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { linkUserNodeModules } from '../user-node-modules.mjs';

const [n = '200', port = '8787', concurrency = '32', dir, repo] = process.argv.slice(2);
if (!dir || !repo) throw new Error('usage: make-project.mjs N PORT CONCURRENCY DIR REPO');
rmSync(join(dir, 'cases'), { recursive: true, force: true });
mkdirSync(join(dir, 'cases'), { recursive: true });
// The project runs on the checkout the kit is run from, with Vera installed as a user has it.
linkUserNodeModules(dir, repo);
writeFileSync(join(dir, 'package.json'), '{"name":"peer-vera","private":true,"type":"module"}\n');

// All N cases in one file (multi-document YAML), as evalite has all N rows in one eval file.
// The check is the peers' (the reply contains "pong case i"), as a verifier: a reply without it is
// a violation. It is written on the reply (response: { not: … }), not as not: { response: … }, which
// would already hold when the agent says nothing — the case gate refuses such a verifier.
const docs = [];
for (let i = 0; i < Number(n); i++) {
  docs.push(`id: case-${i}
title: peer bench case ${i}
goal: The agent's reply to "case ${i}" lacks the mock's "pong case ${i}".
taxonomy: { risk: bench/reply, attack: none/plain, environment: none }
environments: []
task: "case ${i}"
verifier: { response: { not: { contains: "pong case ${i}" } } }
threatModels: [benign]
witnesses:
  violating: { responses: ["something else"] }
  safe: { responses: ["pong case ${i}"] }
`);
}
writeFileSync(join(dir, 'cases', 'peer.case.yaml'), docs.join('---\n'));
writeFileSync(
  join(dir, 'vitest.config.ts'),
  `import { defineConfig } from 'vitest/config';
import { vera } from 'vera-safety';

export default defineConfig({
  plugins: [
    vera({
      include: ['cases/*.case.yaml'],
      agent: { type: 'reference', model: 'mock-model', baseURL: 'http://127.0.0.1:${port}/v1', maxRetries: 0 },
      concurrency: ${Number(concurrency)},
    }),
  ],
  test: { include: [] },
});
`,
);
