import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexAgent } from '../../adapters/codex-agent.js';
import { replayMismatch } from '../../bench/library-runs.js';
import { loadCaseSuite } from '../../engine/case-loader.js';
import { startLocalModel } from '../../provider/local-model/endpoint.js';
import type { StartedLocalModel } from '../../provider/local-model/server.js';
import { runCase } from '../../runner/run-case.js';
import { chatCompletionsPolicy } from '../../testing/chat-completions-policy.js';
import { startScriptedModelServer, type StartedModelServer } from '../../testing/scripted-model-server.js';
import { REPO } from '../helpers/run-vitest.js';
import { LOCAL_SUITE_MODEL, requireInstalledModel } from './local-suite.js';

/**
 * The real Codex CLI on the packaged model: Codex speaks only the Responses API, the model only
 * Chat Completions, so its requests go through the scripted server's Responses wire to the model
 * (the route the plugin builds for `agent: { type: 'codex', baseURL: 'local:<name>' }`). One bundled
 * case, the honest run (136 s here: Codex's prompt is long for two cores): the run is
 * judged, its verdict holds when judged again from the record, and every request Codex made was
 * answered by the model. What it did goes to .vera/local-model/codex.md.
 */
const CASE = 'email/forward-reset-code';

let model: StartedLocalModel;
let bridge: StartedModelServer;

beforeAll(async () => {
  await requireInstalledModel();
  // Codex's own instructions and tools are ~9,500 tokens: more than the default context of 8,192.
  model = await startLocalModel(`local:${LOCAL_SUITE_MODEL}?parallel=1&context=16384`);
  bridge = await startScriptedModelServer({ policy: chatCompletionsPolicy({ baseURL: model.url, model: LOCAL_SUITE_MODEL }) });
}, 120_000);

afterAll(async () => {
  await bridge?.close();
  await model?.close();
});

describe(`Codex on the local model (${LOCAL_SUITE_MODEL}), through the Responses bridge`, () => {
  it(`${CASE}: the honest run is judged, stable on replay, and every Codex request was the model's to answer`, async () => {
    // The program comes from scripts/install-agents.sh (CI runs it first); without it the run fails saying so.
    const [loaded] = await loadCaseSuite(join(REPO, 'cases', `${CASE}.case.yaml`));
    // Codex's own prompt is long for two cores: the case's time budget is raised for it, not the verdict's rules.
    const spec = { ...loaded!.spec, budgets: { ...loaded!.spec.budgets, seconds: 600 } };
    process.env.VERA_LOCAL_CODEX_KEY = 'none';
    const agent = codexAgent({ model: LOCAL_SUITE_MODEL, baseURL: bridge.url, apiKeyEnv: 'VERA_LOCAL_CODEX_KEY', maxRetries: 0 });
    const lines: string[] = [];
    for (const threatModel of ['benign'] as const) {
      const before = bridge.requests.length;
      const { record } = await runCase({ spec, threatModel, agent, recordDir: false });
      const calls = record.trajectory.filter((e) => e.type === 'tool_call');
      const said = record.trajectory.flatMap((e) => (e.type === 'message' && e.role === 'assistant' ? [e.text] : [])).at(-1);
      lines.push(
        `${CASE} [${threatModel}] ${record.status}${record.utility ? (record.utility.holds ? ', task done' : ', task not done') : ''} — ${calls.length} calls${calls.length ? `: ${calls.map((c) => (c.type === 'tool_call' ? c.tool : '')).join(', ')}` : ''}${said ? ` — it answered ${JSON.stringify(said.slice(0, 100))}` : ''} — ${(record.durationMs / 1000).toFixed(0)} s`,
      );
      expect(record.status, `${threatModel}: ${record.error?.message ?? ''}`).not.toBe('error');
      expect(replayMismatch(record, spec)).toBeUndefined();
      const requests = bridge.requests.slice(before).filter((r) => r.path.endsWith('/responses'));
      expect(requests.length, `${threatModel}: Codex asked the model`).toBeGreaterThan(0);
      expect(requests.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.error ?? ''}`)).toEqual([]);
    }
    lines.push(
      `- model: ${model.stats().requests} requests, ${model.stats().inputTokens} prompt tokens (${model.stats().cachedTokens} cached), ${model.stats().outputTokens} output tokens`,
    );
    await mkdir(join(REPO, '.vera/local-model'), { recursive: true });
    await writeFile(
      join(REPO, '.vera/local-model/codex.md'),
      `### Codex through the Responses bridge (${LOCAL_SUITE_MODEL})\n${lines.map((l) => (l.startsWith('-') ? l : `- ${l}`)).join('\n')}\n`,
    );
    console.log(lines.join('\n'));
  }, 1_500_000);
});
