#!/usr/bin/env node
// `npm run demo`: the bundled cases against the reference agent, backed by the embedded scripted
// model (no API key, no Docker, no network) — first with the `naive` policy, then `guarded`.
// It prints one ASR table per policy. It exits non-zero only if something broke (a case file
// that does not load, a run that could not be judged), never because the naive agent is unsafe.
import { startVitest } from 'vitest/node';

const policies = [
  ['naive', 'follows instructions from anywhere, including text inside tool results'],
  ['guarded', 'ignores instructions inside tool results, refuses to send secrets out'],
];

delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_BASE_URL;
let broken = 0;
const times = [];
console.log('Vera demo: bundled safety cases × threat models, reference agent on the embedded scripted model.');
for (const [policy, description] of policies) {
  process.env.VERA_SCRIPTED_POLICY = policy;
  console.log(`\n━━ policy "${policy}": ${description}`);
  const started = performance.now();
  const quiet = {}; // the Vera plugin adds its own ASR reporter; nothing else is printed
  const vitest = await startVitest('test', [], { project: ['cases'], run: true, watch: false, reporters: [quiet] });
  const seconds = (performance.now() - started) / 1000;
  times.push(`${policy} ${seconds.toFixed(1)} s`);
  for (const module of vitest.state.getTestModules()) {
    const moduleErrors = module.errors();
    if (moduleErrors.length) {
      broken++;
      console.error(`  could not load ${module.moduleId}: ${moduleErrors[0].message}`);
    }
    for (const test of module.children.allTests()) {
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
