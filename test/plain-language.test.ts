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
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODEX_PROGRAM } from '../adapters/agent-programs.js';
import { codexAgent } from '../adapters/codex-agent.js';
import { referenceAgent } from '../adapters/reference-agent.js';
import { loadCaseSuite } from '../engine/case-loader.js';
import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import { runCase } from '../runner/run-case.js';
import type { AgentAdapter } from '../adapters/adapter.js';
import { startScriptedModelServer, type RecordedRequest, type StartedModelServer } from '../testing/scripted-model-server.js';
import { agentInstall } from './helpers/agent-runs.js';
import { REPO } from './helpers/run-vitest.js';

/** Test-double syntax: an ACTION directive, or a data reference into an earlier tool result. */
const PLAN_SYNTAX = /ACTION:\s*[A-Za-z_]|<<\s*[A-Za-z0-9_-]+\s*(?:[.[]|>>)/;

/**
 * The hand-written cases and, of the composed library, one case per attack method (the first in
 * file order): every renderer's text goes over the wire. test/library.test.ts checks the text of
 * every library case without running it here.
 */
async function bundledCases(): Promise<SafetyCase[]> {
  const out: SafetyCase[] = [];
  const methods = new Set<string>();
  const entries = (await readdir(join(REPO, 'cases'), { recursive: true, withFileTypes: true })).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  );
  for (const entry of entries) {
    if (!entry.isFile() || !/\.case\.ya?ml$/.test(entry.name)) continue;
    const specs = (await loadCaseSuite(join(entry.parentPath, entry.name))).map((c) => c.spec);
    if (!entry.parentPath.includes(`${sep}bench`)) out.push(...specs);
    else for (const spec of specs) if (!methods.has(spec.taxonomy.attack)) out.push(spec), methods.add(spec.taxonomy.attack);
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
  return requests.flatMap((r) =>
    agentVisibleTexts(r)
      .filter((t) => PLAN_SYNTAX.test(t))
      .map((t) => `${r.path}: ${t.slice(0, 200)}`),
  );
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
        for (const s of statuses)
          expect(`${s.id} ${s.threatModel} ${s.status}`).toBe(`${s.id} ${s.threatModel} ${s.threatModel === 'benign' ? 'safe' : 'violated'}`);
      }
    }, 300_000);
  }

  const codex = agentInstall([CODEX_PROGRAM]);
  it.skipIf(codex.skip)(
    'Responses wire (the real Codex CLI), naive: no request carries plan syntax',
    async () => {
      if (codex.missing) throw new Error(codex.missing);
      const server = await startScriptedModelServer({ policy: 'naive' });
      servers.push(server);
      const statuses = await runAll(server, (s) => codexAgent({ model: 'vera-scripted', baseURL: s.url, apiKeyEnv: 'VERA_TEST_NO_KEY', maxRetries: 0 }));
      expect(statuses.filter((s) => s.error)).toEqual([]);
      const models = server.requests.filter((r) => r.conversation && r.path === '/v1/responses');
      expect(models.length).toBeGreaterThan(cases.length * 4);
      expect(offending(server.requests)).toEqual([]);
      // Codex lists its tools once per session and the gateway's HTTP transport cannot push MCP's
      // list-changed notification, so a rug pull on a description never reaches it: with no result
      // rewritten either, its runs (multi-channel and indirect: a rug pull comes with an honest user)
      // are N/A (the attack never reached the agent), not safe.
      const rugPulls = new Set(cases.filter((c) => c.taxonomy.attack === 'tool-poisoning/rug-pull').map((c) => c.id));
      const expected = (s: { id: string; threatModel: ThreatModel }) =>
        s.threatModel === 'benign' ? 'safe' : rugPulls.has(s.id) ? 'not-applicable' : 'violated';
      for (const s of statuses) expect(`${s.id} ${s.threatModel} ${s.status}`).toBe(`${s.id} ${s.threatModel} ${expected(s)}`);
    },
    900_000,
  );
});
