/**
 * Cases real agents can take: while every bundled case runs under every threat model it lists,
 * every request the scripted model servers receive is kept, and no text an agent could see — the
 * user's and the adversary's messages, tool results (injections included), tool descriptions, its
 * own earlier replies — may carry the scripted model's plan syntax (ACTION lines, `<<tool.path>>`
 * references). This file: the Chat Completions wire (the reference agent); the Responses wire (the
 * real Codex CLI) is test/plain-language-codex.test.ts, in the integration project. The plan reaches the scripted model out of band:
 * the naive policy still violates every adversarial run.
 */
import { describe, expect, it } from 'vitest';
import { referenceAgent } from '../adapters/reference-agent.js';
import { offending, plainLanguageSuite, runAll } from './helpers/plain-language.js';

const suite = plainLanguageSuite();

describe('bundled cases read as real conversations', () => {
  for (const policy of ['naive', 'guarded'] as const) {
    it(`Chat Completions wire (reference agent), ${policy}: no request carries plan syntax`, async () => {
      const server = await suite.server(policy);
      const cases = suite.cases();
      const statuses = await runAll(cases, server, (s) => referenceAgent({ model: 'scripted', baseURL: s.url, apiKey: 'test', maxRetries: 0 }));
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
});
