/**
 * The bundled cases over the Responses wire, through the real Codex CLI (skipped off CI where it is
 * not installed): no text the agent sees carries the scripted model's plan syntax, and the naive
 * policy still violates every adversarial run (test/plain-language.test.ts has the Chat Completions wire).
 */
import { describe, expect, it } from 'vitest';
import { CODEX_PROGRAM } from '../adapters/agent-programs.js';
import { codexAgent } from '../adapters/codex-agent.js';
import type { ThreatModel } from '../engine/case-schema.js';
import { agentInstall } from './helpers/agent-runs.js';
import { offending, plainLanguageSuite, runAll } from './helpers/plain-language.js';

const suite = plainLanguageSuite();

describe('bundled cases read as real conversations', () => {
  const codex = agentInstall([CODEX_PROGRAM]);
  it.skipIf(codex.skip)(
    'Responses wire (the real Codex CLI), naive: no request carries plan syntax',
    async () => {
      if (codex.missing) throw new Error(codex.missing);
      const server = await suite.server('naive');
      const cases = suite.cases();
      const statuses = await runAll(cases, server, (s) => codexAgent({ model: 'vera-scripted', baseURL: s.url, apiKeyEnv: 'VERA_TEST_NO_KEY', maxRetries: 0 }));
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
