/**
 * Cases real agents can take: while every bundled case runs under every threat model it lists,
 * every request the scripted model servers receive is kept, and no text an agent could see — the
 * user's and the adversary's messages, tool results (injections included), tool descriptions, its
 * own earlier replies — may carry the scripted model's plan syntax (ACTION lines, `<<tool.path>>`
 * references). Two wires: Chat Completions (the reference agent) and Responses (the real Codex
 * CLI; skipped off CI where it is not installed). The plan reaches the scripted model out of band:
 * the naive policy still violates every adversarial run.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODEX_PROGRAM } from '../adapters/agent-programs.js';
import { codexAgent } from '../adapters/codex-agent.js';
import { referenceAgent } from '../adapters/reference-agent.js';
import { loadCaseSuite } from '../engine/case-loader.js';
import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import { runCase } from '../engine/run-case.js';
import type { AgentAdapter } from '../adapters/adapter.js';
import { startScriptedModelServer, type RecordedRequest, type StartedModelServer } from '../testing/scripted-model-server.js';
import { agentInstall } from './helpers/agent-runs.js';
import { REPO } from './helpers/run-vitest.js';

/** Test-double syntax: an ACTION directive, or a data reference into an earlier tool result. */
const PLAN_SYNTAX = /ACTION:\s*[A-Za-z_]|<<\s*[A-Za-z0-9_-]+\s*(?:[.[]|>>)/;

async function bundledCases(): Promise<SafetyCase[]> {
  const out: SafetyCase[] = [];
  for (const entry of await readdir(join(REPO, 'cases'), { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && /\.case\.ya?ml$/.test(entry.name)) out.push(...(await loadCaseSuite(join(entry.parentPath, entry.name))).map((c) => c.spec));
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/** Every piece of text a request shows the model: messages of every role, tool names and descriptions. */
function agentVisibleTexts(request: RecordedRequest): string[] {
  const c = request.conversation;
  if (!c) return [];
  return [
    ...c.messages.map((m) => m.text),
    ...c.messages.flatMap((m) => (m.toolCalls ?? []).map((t) => JSON.stringify(t.arguments))),
    ...c.tools.map((t) => `${t.name} ${t.description ?? ''}`),
  ];
}

function offending(requests: readonly RecordedRequest[]): string[] {
  return requests.flatMap((r) => agentVisibleTexts(r).filter((t) => PLAN_SYNTAX.test(t)).map((t) => `${r.path}: ${t.slice(0, 200)}`));
}

let cases: SafetyCase[];
beforeAll(async () => {
  cases = await bundledCases();
});

async function runAll(server: StartedModelServer, agent: (server: StartedModelServer) => AgentAdapter) {
  const statuses: Array<{ id: string; threatModel: ThreatModel; status: string; error?: string }> = [];
  for (const spec of cases) {
    for (const threatModel of spec.threatModels) {
      const { record } = await runCase({ spec, threatModel, agent: agent(server), recordDir: false });
      statuses.push({ id: spec.id, threatModel, status: record.status, ...(record.error ? { error: record.error.message } : {}) });
    }
  }
  return statuses;
}

describe('bundled cases read as real conversations', () => {
  const servers: StartedModelServer[] = [];
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  for (const policy of ['naive', 'guarded'] as const) {
    it(`Chat Completions wire (reference agent), ${policy}: no request carries plan syntax`, async () => {
      const server = await startScriptedModelServer({ policy });
      servers.push(server);
      const statuses = await runAll(server, (s) => referenceAgent({ model: 'scripted', baseURL: s.url, apiKey: 'test', maxRetries: 0 }));
      expect(statuses.filter((s) => s.error)).toEqual([]);
      const models = server.requests.filter((r) => r.conversation);
      expect(models.length).toBeGreaterThan(cases.length * 4);
      // Every model request came under its run's token: the plan reached the server out of band.
      expect(models.every((r) => r.runToken !== undefined)).toBe(true);
      expect(offending(server.requests)).toEqual([]);
      if (policy === 'naive') {
        // The plan still drives the scripted model: every adversarial run is violated, every benign one safe.
        for (const s of statuses) expect(`${s.id} ${s.threatModel} ${s.status}`).toBe(`${s.id} ${s.threatModel} ${s.threatModel === 'benign' ? 'safe' : 'violated'}`);
      }
    }, 300_000);
  }

  const codex = agentInstall([CODEX_PROGRAM]);
  it.skipIf(codex.skip)('Responses wire (the real Codex CLI), naive: no request carries plan syntax', async () => {
    if (codex.missing) throw new Error(codex.missing);
    const server = await startScriptedModelServer({ policy: 'naive' });
    servers.push(server);
    const statuses = await runAll(server, (s) => codexAgent({ model: 'vera-scripted', baseURL: s.url, apiKeyEnv: 'VERA_TEST_NO_KEY', maxRetries: 0 }));
    expect(statuses.filter((s) => s.error)).toEqual([]);
    const models = server.requests.filter((r) => r.conversation && r.path === '/v1/responses');
    expect(models.length).toBeGreaterThan(cases.length * 4);
    expect(offending(server.requests)).toEqual([]);
    for (const s of statuses) expect(`${s.id} ${s.threatModel} ${s.status}`).toBe(`${s.id} ${s.threatModel} ${s.threatModel === 'benign' ? 'safe' : 'violated'}`);
  }, 900_000);
});
