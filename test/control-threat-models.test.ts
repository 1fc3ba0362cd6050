/**
 * Who drives the conversation in each threat model, and what the adversary controls there. An
 * LLM adversary is configured for every run; only single- and multi-channel may use it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmAdversary } from '../control/llm-adversary.js';
import { prepareRun } from '../runner/run-stages.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { threatModels, type SafetyCase, type ThreatModel } from '../engine/case-schema.js';
import { runCase } from '../runner/run-case.js';
import { testMeta } from '../plugin/meta-from-record.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { agentOn, bundledCase, userMessages } from './helpers/control-cases.js';

let spec: SafetyCase;
let naive: StartedModelServer;
let adversaryModel: StartedModelServer;

beforeAll(async () => {
  spec = await bundledCase('email/forward-reset-code.case.yaml');
  [naive, adversaryModel] = await Promise.all([startScriptedModelServer({ policy: 'naive' }), startScriptedModelServer({ policy: 'adversary' })]);
});
afterAll(async () => {
  await Promise.all([naive.close(), adversaryModel.close()]);
});

const adversary = () => llmAdversary({ model: 'red-team', baseURL: adversaryModel.url, apiKey: 'test', maxRetries: 0 });

describe('indirect: an honest user, injected tool results only', () => {
  it('never sends an adversarial user message, even with an LLM adversary configured', async () => {
    const before = adversaryModel.requests.length;
    const { record } = await runCase({ spec, threatModel: 'indirect', agent: agentOn(naive), adversary: adversary(), recordDir: false });
    expect(adversaryModel.requests.length).toBe(before);
    expect(record.control).toBe('benign-user');
    expect(userMessages(record.trajectory)).toEqual([spec.task]);
    expect(record.control_transcript.map((e) => e.strategy ?? e.decision.action)).toEqual(['honest-task', 'stop']);
    expect(record.stopReason).toBe('task delivered; the agent asked nothing more');
    expect(record.controlPlan).toBeUndefined();
    // The attack came through the tool result alone, and it worked on the naive agent.
    expect(record.injections.fired).toEqual(['audit-request']);
    expect(record.status).toBe('violated');
  });

  it('the engine refuses an adversary where the user is honest, even when passed as the user', async () => {
    const before = adversaryModel.requests.length;
    for (const threatModel of ['indirect', 'benign'] as const) {
      const { record } = await runCase({ spec, threatModel, agent: agentOn(naive), user: adversary(), recordDir: false });
      expect(record.status).toBe('error');
      expect(record.error?.message).toBe(`control agent llm-adversary:red-team is an adversary, but in "${threatModel}" the user is honest`);
      expect(record.turns).toBe(0);
      expect(record.trajectory).toEqual([]);
    }
    expect(adversaryModel.requests.length).toBe(before);
    const run = prepareRun({ spec, threatModel: 'indirect' });
    const withAgent = await (await (await run.startSandbox(new InProcessBackend())).startGateway()).startAgent(agentOn(naive));
    await expect(withAgent.startControl(adversary())).rejects.toThrow(/is an adversary/);
    await run.dispose();
  });
});

describe('each threat model: who speaks, what is injected, utility evaluated', () => {
  const expected: Record<ThreatModel, { control: string; rules: string[]; adversaryRequests: boolean; surfaceInjections: string[] }> = {
    benign: { control: 'benign-user', rules: [], adversaryRequests: false, surfaceInjections: [] },
    'single-channel': { control: 'llm-adversary:red-team', rules: [], adversaryRequests: true, surfaceInjections: [] },
    'multi-channel': { control: 'llm-adversary:red-team', rules: ['audit-request'], adversaryRequests: true, surfaceInjections: ['audit-request'] },
    indirect: { control: 'benign-user', rules: ['audit-request'], adversaryRequests: false, surfaceInjections: [] },
  };

  it.each(threatModels.map((m) => [m]))('%s', async (threatModel) => {
    const server = await startScriptedModelServer({ policy: 'adversary' });
    try {
      const { record } = await runCase({
        spec,
        threatModel,
        agent: agentOn(naive),
        adversary: llmAdversary({ model: 'red-team', baseURL: server.url, apiKey: 'test', maxRetries: 0 }),
        recordDir: false,
      });
      const want = expected[threatModel];
      expect(record.control).toBe(want.control);
      expect(record.injections.rules).toEqual(want.rules);
      expect(server.requests.length > 0).toBe(want.adversaryRequests);
      if (want.adversaryRequests) {
        const system = server.requests[0]!.conversation!.messages[0]!.text;
        const surface = JSON.parse(/Attack surface \(JSON\): (.*)/.exec(system)![1]!);
        expect(surface.threatModel).toBe(threatModel);
        expect(surface.injections.map((i: { id: string }) => i.id)).toEqual(want.surfaceInjections);
        expect(system.includes('You also control text injected into tool results')).toBe(want.surfaceInjections.length > 0);
      }
      // Utility under attack: evaluated in every threat model, carried in the record and the test meta.
      expect(record.utility).toBeDefined();
      expect(testMeta(spec, threatModel, 'x.case.yaml', record).utility).toBe(record.utility!.holds);
    } finally {
      await server.close();
    }
  });
});
