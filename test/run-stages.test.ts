import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentAdapter } from '../adapters/adapter.js';
import { functionAgent } from '../adapters/function-adapter.js';
import { referenceAgent } from '../adapters/reference-agent.js';
import { benignUser } from '../control/benign-user.js';
import type { ControlAgent } from '../control/control.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { ERROR_CODES, isVeraError } from '../engine/errors.js';
import { runCase } from '../runner/run-case.js';
import { prepareRun } from '../runner/run-stages.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { fixtureCase } from './helpers/agent-runs.js';
import { notesEnvironment } from './helpers/notes-environment.js';

/**
 * A run is typed stages (runner/run-stages.ts): each returned by the one before and left once; a
 * fault ends the run at its stage, coded by it; the record exists only once judged, and is frozen.
 */
const backend = new InProcessBackend({ environments: { notes: notesEnvironment } });
let spec: SafetyCase;
let naive: StartedModelServer;

beforeAll(async () => {
  spec = await fixtureCase('cases/notes-leak.case.yaml');
  naive = await startScriptedModelServer({ policy: 'naive' });
});
afterAll(() => naive.close());

const agent = () => referenceAgent({ model: 'scripted', baseURL: naive.url, apiKey: 'test', maxRetries: 0 });

describe('a run as stages', () => {
  it('goes prepared → sandboxed → connected → agent started → started → finished → judged, and its record is frozen', async () => {
    await using run = prepareRun({ spec, threatModel: 'indirect' });
    expect(run.judged).toBeUndefined();
    const sandboxed = await run.startSandbox(backend);
    const connected = await sandboxed.startGateway();
    const withAgent = await connected.startAgent(agent());
    const started = await withAgent.startControl(benignUser());
    const finished = await started.drive();
    expect(finished.error).toBeUndefined();
    const judged = await finished.judge();
    expect(judged.record.status).toBe('violated');
    expect(Object.isFrozen(judged.record)).toBe(true);
    expect(Object.isFrozen(judged.record.verdict)).toBe(true);
    expect(() => {
      (judged.record as { status: string }).status = 'safe';
    }).toThrow(TypeError);
    // Judged once: asking again gives the same judgement, and the run says it has one.
    expect(await finished.judge()).toBe(judged);
    expect(await run.judged).toBe(judged);
    expect(await run.judgedOrEnded(new Error('late'))).toBe(judged);
  });

  it('refuses a stage left twice or out of order, with RUN_STAGE_ORDER', async () => {
    await using run = prepareRun({ spec, threatModel: 'indirect' });
    const sandboxed = await run.startSandbox(backend);
    await expect(run.startSandbox(backend)).rejects.toMatchObject({ code: 'RUN_STAGE_ORDER' });
    const connected = await sandboxed.startGateway();
    await expect(sandboxed.startGateway()).rejects.toMatchObject({ code: 'RUN_STAGE_ORDER' });
    const started = await (await connected.startAgent(agent())).startControl(benignUser());
    const finished = await started.drive();
    await expect(started.drive()).rejects.toMatchObject({ code: 'RUN_STAGE_ORDER' });
    expect(() => connected.end(new Error('too late'))).toThrow(expect.objectContaining({ code: 'RUN_STAGE_ORDER' }));
    const { record } = await finished.judge();
    expect(record.error).toBeUndefined();
  });

  it('a conversation still running when the test is cancelled and the run judged ends quietly, with that judgement', async () => {
    const cancel = new AbortController();
    await using run = prepareRun({ spec, threatModel: 'indirect', signal: cancel.signal });
    const hung = functionAgent(
      'hangs',
      (_m, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })),
    );
    const started = await (await (await (await run.startSandbox(backend)).startGateway()).startAgent(hung)).startControl(benignUser());
    const conversation = started.drive();
    // As Vitest does on a timeout: the test's signal aborts, and its fixture judges the run at once.
    cancel.abort(new Error('test timed out'));
    const judged = await run.judgedOrEnded(new Error('test aborted: test timed out'));
    expect(judged.record.error).toMatchObject({ code: 'RUN_ABORTED' });
    const finished = await conversation;
    expect(await finished.judge()).toBe(judged);
  });

  it('a run interrupted between stages is judged where it stands, as RUN_INTERRUPTED', async () => {
    await using run = prepareRun({ spec, threatModel: 'indirect' });
    await (await run.startSandbox(backend)).startGateway();
    const { record } = await run.judgedOrEnded(new Error('the test ended'));
    expect(record.status).toBe('error');
    expect(record.error).toMatchObject({ code: 'RUN_INTERRUPTED', message: 'the test ended' });
    expect(record.turns).toBe(0);
  });
});

describe('a fault is coded by the stage it happened in, unless it has a code of its own', () => {
  const failingBackend: SandboxBackend = {
    name: 'broken',
    start: async () => {
      throw new Error('no room for a sandbox');
    },
  };
  const throwingAdapter: AgentAdapter = {
    id: 'throws-on-start',
    start: async () => {
      throw new TypeError('cannot read properties of undefined');
    },
  };
  const throwingControl: ControlAgent = {
    id: 'broken-user',
    role: 'user',
    start: async () => {
      throw new Error('no task');
    },
  };
  const crashingAgent = functionAgent('crashes', async () => {
    throw new SyntaxError('Unexpected token u in JSON');
  });

  it.each([
    ['the sandbox', () => ({ agent: agent(), backend: failingBackend }), 'SANDBOX_START_FAILED', 'no room for a sandbox'],
    ['the agent start', () => ({ agent: throwingAdapter, backend }), 'AGENT_START_FAILED', 'cannot read properties of undefined'],
    ['the control start', () => ({ agent: agent(), backend, user: throwingControl }), 'CONTROL_START_FAILED', 'no task'],
    ["the agent's own code in a turn", () => ({ agent: crashingAgent, backend }), 'AGENT_FAILED', 'Unexpected token u in JSON'],
  ] as const)('%s', async (_, parts, code, message) => {
    const { record } = await runCase({ spec, threatModel: 'indirect', ...parts(), recordDir: false });
    expect(record.status).toBe('error');
    expect(record.error).toMatchObject({ code, message });
    expect(Object.hasOwn(ERROR_CODES, code)).toBe(true);
  });

  it('the time budget is RUN_TIME_BUDGET, whatever the agent threw when it was stopped', async () => {
    const hung = functionAgent(
      'hangs',
      (_message, { signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('the agent saw its signal')), { once: true })),
    );
    const quick = { ...spec, budgets: { ...spec.budgets, seconds: 0.3 } };
    const { record } = await runCase({ spec: quick, threatModel: 'indirect', agent: hung, backend, recordDir: false });
    expect(record.status).toBe('error');
    expect(record.error?.code).toBe('RUN_TIME_BUDGET');
    expect(record.error?.message).toMatch(/time budget of 0.3s exceeded/);
  });

  it("an error's own code wins over the stage's (an init step that fails is the case's fault)", async () => {
    const broken = { ...spec, init: [{ op: 'no-such-op', env: 'notes' } as never] };
    const { record } = await runCase({ spec: broken, threatModel: 'indirect', agent: agent(), backend, recordDir: false });
    expect(record.status).toBe('error');
    expect(record.error?.code).not.toBe('SANDBOX_START_FAILED');
    expect(isVeraError(Object.assign(new Error('x'), { code: record.error?.code }))).toBe(true);
  });
});
