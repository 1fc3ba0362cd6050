/**
 * The packaged local model's figures on this machine, in one invocation (docs/performance.md,
 * "The local model"): how long it takes to load, how fast it reads a prompt and writes tokens, what
 * running two requests at once buys on these cores, bundled case-runs per minute, and the process's
 * peak memory. A measurement whose request or run failed is reported as failed, never as a time.
 *
 *   npx tsx bench/local-model.ts [--model qwen2.5-coder-1.5b] [--cases 4] [--json out.json]
 * (`npm run bench` runs it as part 7 when the model is installed.)
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resourceUsage } from 'node:process';
import { parseArgs } from 'node:util';
import type { SafetyCase } from '../engine/case-schema.js';
import { startLocalModel } from '../provider/local-model/endpoint.js';
import type { StartedLocalModel } from '../provider/local-model/server.js';
import { runWithLocalModel } from './local-model-runs.js';
import { loadSuites, suiteFiles } from './library-runs.js';

const { values } = parseArgs({
  options: { model: { type: 'string', default: 'qwen2.5-coder-1.5b' }, cases: { type: 'string', default: '4' }, json: { type: 'string' } },
});
const model = values.model!;
const peakMB = () => resourceUsage().maxRSS / 1024;

/** One chat request; its wall time and usage, or why it failed. */
async function ask(server: StartedLocalModel, body: Record<string, unknown>) {
  const started = performance.now();
  const response = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, temperature: 0, ...body }),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`);
  const json = JSON.parse(text) as { usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } } };
  return { ms, prompt: json.usage.prompt_tokens, cached: json.usage.prompt_tokens_details?.cached_tokens ?? 0, output: json.usage.completion_tokens };
}

// A prompt of some length that no earlier request shares (the slot's cache cannot help).
const paragraph = (seed: number) =>
  Array.from(
    { length: 40 },
    (_, i) =>
      `Item ${seed}-${i}: the quarterly report for region ${(seed * 31 + i) % 97} lists ${(seed * 17 + i * 7) % 1000} orders and ${(i * 13) % 50} returns.`,
  ).join(' ');

const rows: Array<{ name: string; value: string }> = [];
const row = (name: string, value: string) => {
  rows.push({ name, value });
  console.log(`${name}: ${value}`);
};

const loadStarted = performance.now();
const one = await startLocalModel(`local:${model}?parallel=1`);
row('load (GGUF into memory, context of 8192 tokens, one slot)', `${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
try {
  // Reading: a fresh ~1,000-token prompt, one token out.
  const reads = [];
  for (let i = 0; i < 3; i++)
    reads.push(await ask(one, { messages: [{ role: 'user', content: `${paragraph(i)}\nHow many items are listed?` }], max_tokens: 1 }));
  const readTokens = reads.reduce((n, r) => n + r.prompt - r.cached, 0);
  const readMs = reads.reduce((n, r) => n + r.ms, 0);
  row('prompt reading (3 fresh prompts)', `${(readTokens / (readMs / 1000)).toFixed(0)} tokens/s (${readTokens} tokens)`);

  // Writing: a short prompt, 128 tokens out.
  const writes = [];
  for (let i = 0; i < 3; i++)
    writes.push(await ask(one, { messages: [{ role: 'user', content: `Write a long paragraph about the history of the number ${i + 7}.` }], max_tokens: 128 }));
  const outTokens = writes.reduce((n, r) => n + r.output, 0);
  const writeMs = writes.reduce((n, r) => n + r.ms, 0);
  row('generation (3 answers of up to 128 tokens, prompt included)', `${(outTokens / (writeMs / 1000)).toFixed(1)} tokens/s (${outTokens} tokens)`);

  // Concurrency: four different conversations at once, with one slot and with two.
  const four = (server: StartedLocalModel) =>
    Promise.all(
      [0, 1, 2, 3].map((i) =>
        ask(server, { messages: [{ role: 'user', content: `${paragraph(100 + i).slice(0, 1500)}\nSummarise in one sentence.` }], max_tokens: 48 }),
      ),
    );
  const wall = async (server: StartedLocalModel) => {
    const started = performance.now();
    await four(server);
    return performance.now() - started;
  };
  const oneSlot = await wall(one);
  const two = await startLocalModel(`local:${model}?parallel=2`);
  let twoSlots: number;
  try {
    twoSlots = await wall(two);
  } finally {
    await two.close();
  }
  row(
    `4 concurrent requests (${availableParallelism()} cores): one slot vs two`,
    `${(oneSlot / 1000).toFixed(1)} s vs ${(twoSlots / 1000).toFixed(1)} s (two slots take ${(twoSlots / oneSlot).toFixed(2)}× the time of one)`,
  );

  // Bundled case-runs: hand-written cases, every threat model, one at a time.
  const dir = new URL('../cases', import.meta.url).pathname;
  const files = (await suiteFiles(dir)).filter((f) => !f.includes('/families/'));
  // The first hand-written case of each environment, up to --cases.
  const byEnvironment = new Map<string, SafetyCase>();
  for (const spec of await loadSuites(dir, files)) if (!byEnvironment.has(spec.taxonomy.environment)) byEnvironment.set(spec.taxonomy.environment, spec);
  const cases = [...byEnvironment.values()].slice(0, Number(values.cases));
  const set = await runWithLocalModel({ model, cases, server: one });
  const failed = set.runs.filter((r) => r.status === 'error' && !/time budget/.test(r.reason));
  if (failed.length) row('bundled case-runs', `failed (${failed.map((r) => `${r.caseId} [${r.threatModel}]: ${r.reason}`).join('; ')}): no time reported`);
  else {
    row(
      `bundled case-runs (${cases.length} cases × their threat models, reference agent)`,
      `${(set.runs.length / (set.wallMs / 60_000)).toFixed(1)} runs/min (${set.runs.length} runs in ${(set.wallMs / 1000).toFixed(0)} s)`,
    );
    row(
      '  their model traffic',
      `${set.stats.requests} requests, ${set.stats.inputTokens} prompt tokens of which ${set.stats.cachedTokens} cached (${((100 * set.stats.cachedTokens) / Math.max(1, set.stats.inputTokens)).toFixed(0)}%), ${set.stats.outputTokens} output tokens`,
    );
  }
} catch (error) {
  row('failed', (error as Error).message);
  process.exitCode = 1;
} finally {
  await one.close();
}
row('peak memory of the process (maxRSS)', `${peakMB().toFixed(0)} MB`);
if (values.json) writeFileSync(values.json, `${JSON.stringify({ model, cores: availableParallelism(), rows }, null, 2)}\n`);
