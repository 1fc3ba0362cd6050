#!/usr/bin/env node
// `npm run demo`: the bundled cases against the reference agent, backed by the embedded scripted
// model (no API key, no Docker, no network) — first with the `naive` policy, then `guarded`.
// It prints one ASR table per policy. It exits non-zero only if something broke (a case file
// that does not load, a run that could not be judged), never because the naive agent is unsafe.
//   npm run demo              the hand-written cases and a stratified sample of the library:
//                             two cases per risk category, from different environments and methods
//   npm run demo -- --all     every case of the library (cases/bench) as well
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { startVitest } from 'vitest/node';

const all = process.argv.includes('--all');

/** Case files under `dir` (recursively), sorted. */
function caseFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.case.yaml'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * The sample: per risk category, two cases of the composed library from one suite file (the
 * category's smallest, so little is collected) with different attack methods — the same sample
 * every time — plus every hand-written case. Returns the files to collect and the test-name filter.
 */
function sample() {
  const handWritten = caseFiles('cases').filter((f) => !f.startsWith(join('cases', 'bench')));
  const suites = caseFiles(join('cases', 'bench')).map((file) => ({
    file,
    size: statSync(file).size,
    cases: parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS()),
  }));
  const byCategory = new Map();
  for (const suite of suites) {
    const category = suite.cases[0].taxonomy.risk.split('/')[0];
    const best = byCategory.get(category);
    const methods = new Set(suite.cases.map((c) => c.taxonomy.attack));
    if (methods.size >= 2 && (!best || suite.size < best.size)) byCategory.set(category, suite);
  }
  const cases = [...byCategory.values()].flatMap((suite) => {
    const first = suite.cases[0];
    const second =
      suite.cases.find((c) => c.taxonomy.attack !== first.taxonomy.attack && c.tags[0] !== first.tags[0]) ??
      suite.cases.find((c) => c.taxonomy.attack !== first.taxonomy.attack);
    return [first, second].map((c) => ({ ...c, file: suite.file }));
  });
  const ids = [...handWritten.flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS().id)), ...cases.map((c) => c.id)];
  const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const total = suites.reduce((n, s) => n + s.cases.length, 0);
  return {
    files: [...new Set([...handWritten, ...cases.map((c) => c.file)])],
    testNamePattern: `^(?:${ids.map(escapeRegExp).join('|')}) › `,
    label: `${handWritten.length} hand-written cases and ${cases.length} library cases (2 per risk category; --all runs all ${total})`,
  };
}
const filter = all ? undefined : sample();

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
