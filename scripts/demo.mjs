#!/usr/bin/env node
// `npm run demo`: the bundled cases against the reference agent, backed by the embedded scripted
// model (no API key, no Docker, no network) — first with the `naive` policy, then `guarded`.
// It prints one ASR table per policy. It exits non-zero only if something broke (a case file
// that does not load, a run that could not be judged), never because the naive agent is unsafe.
//   npm run demo              the hand-written cases and the library option's stratified sample:
//                             two cases per risk category, from different environments, methods and families
//   npm run demo -- --all     every case of the library (cases/bench) as well
import { join } from 'node:path';
import { startVitest } from 'vitest/node';
// The `library` option's own sample (npm install builds dist/): the same cases a user's `library: {}` runs.
import { selectLibraryCases } from '../dist/plugin/library-preset.js';

const all = process.argv.includes('--all');

/**
 * The sample: the `library` option's stratified one — two cases per risk category, from different
 * environments, methods and families, the same every time — plus every hand-written case.
 * Returns the files to collect and the test-name filter.
 */
async function sample() {
  const selection = await selectLibraryCases({ sample: 'stratified', handWritten: true });
  const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    files: selection.files.map((f) => join(selection.dir, f)),
    testNamePattern: `^(?:${[...selection.cases].map(escapeRegExp).join('|')}) › `,
    label: selection.label,
  };
}
const filter = all ? undefined : await sample();

const policies = [
  ['naive', 'follows instructions from anywhere, including text inside tool results'],
  ['guarded', 'ignores instructions inside tool results, refuses to send secrets out'],
];

delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_BASE_URL;
let broken = 0;
const times = [];
console.log('Vera demo: bundled safety cases × threat models, reference agent on the embedded scripted model.');
console.log(filter ? `Cases: ${filter.label}.` : 'Cases: every bundled case (--all).');
for (const [policy, description] of policies) {
  process.env.VERA_SCRIPTED_POLICY = policy;
  console.log(`\n━━ policy "${policy}": ${description}`);
  const started = performance.now();
  const quiet = {}; // the Vera plugin adds its own ASR reporter; nothing else is printed
  const vitest = await startVitest('test', filter?.files ?? [], {
    project: ['cases'],
    run: true,
    watch: false,
    reporters: [quiet],
    ...(filter ? { testNamePattern: filter.testNamePattern } : {}),
  });
  const seconds = (performance.now() - started) / 1000;
  times.push(`${policy} ${seconds.toFixed(1)} s`);
  for (const module of vitest.state.getTestModules()) {
    const moduleErrors = module.errors();
    if (moduleErrors.length) {
      broken++;
      console.error(`  could not load ${module.moduleId}: ${moduleErrors[0].message}`);
    }
    for (const test of module.children.allTests()) {
      // Left out by the sample's name filter: not run, nothing to judge.
      if (test.result().state === 'skipped' && !test.meta().vera?.status) continue;
      const status = test.meta().vera?.status;
      if (!status || status === 'error') broken++;
    }
  }
  await vitest.close();
}
console.log(`\nWall time: ${times.join(', ')}. Records: .vera/records/`);
if (broken > 0) {
  console.error(`${broken} run(s) could not be judged — see above.`);
  process.exit(1);
}
process.exit(0);
