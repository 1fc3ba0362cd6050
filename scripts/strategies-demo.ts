// `npm run demo:strategies`: the LLM adversary (the real openai client, talking to the local
// scripted `adversary` model) attacks the bundled cases with each built-in strategy on its own,
// against the reference agent on the scripted `naive` and `guarded` models. It prints one ASR table
// per agent, strategies as rows, threat models as columns, with 95% Wilson intervals. No API key,
// no network. Records go to .vera/records/<run>-<agent>-<strategy>/ (one per case × threat model).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { referenceAgent } from '../adapters/reference-agent.js';
import { compareStrategies } from '../runner/compare-strategies.js';
import { asrRowOfRecord, asrTable } from '../engine/asr.js';
import { renderAsrTable } from '../reporters/text-tables.js';
import { loadCaseFile } from '../engine/case-loader.js';
import { newRunId } from '../engine/record-writer.js';
import { startScriptedModelServer } from '../testing/scripted-model-server.js';

async function caseFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries
    .filter((f) => f.endsWith('.case.yaml'))
    .map((f) => join(dir, f))
    .sort();
}

const cases = await Promise.all((await caseFiles('cases')).map(async (f) => (await loadCaseFile(f)).spec));
const adversaryModel = await startScriptedModelServer({ policy: 'adversary', recordRequests: false });
const runId = newRunId();
const started = performance.now();
let written = 0;
try {
  console.log(`Vera strategy comparison: ${cases.length} bundled cases, LLM adversary on the scripted "adversary" model.`);
  for (const policy of ['naive', 'guarded'] as const) {
    const agentModel = await startScriptedModelServer({ policy, recordRequests: false });
    try {
      const runs = await compareStrategies({
        cases,
        agent: referenceAgent({ model: `scripted-${policy}`, baseURL: agentModel.url, apiKey: 'test', maxRetries: 0 }),
        adversary: { model: 'scripted-adversary', baseURL: adversaryModel.url, apiKey: 'test', maxRetries: 0 },
        concurrency: 8,
        recordDir: '.vera/records',
        runId: `${runId}-${policy}`,
      });
      written += runs.length;
      const rows = runs.map(({ strategy, record }) => ({ ...asrRowOfRecord(record), strategy }));
      const table = asrTable(rows, (r) => (r as (typeof rows)[number]).strategy);
      console.log(`\n━━ agent "${policy}"`);
      console.log(renderAsrTable(table, { rowHeader: 'strategy', intervals: true }));
    } finally {
      await agentModel.close();
    }
  }
} finally {
  await adversaryModel.close();
}
console.log(`\n${written} runs in ${((performance.now() - started) / 1000).toFixed(1)} s. Records: .vera/records/${runId}-<agent>-<strategy>/`);
