import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { agentsDir, HERMES_PROGRAM } from '../adapters/agent-programs.js';
import { hermesAgent } from '../adapters/hermes-agent.js';
import { runCase } from '../runner/run-case.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { defineAgentSuite } from './helpers/agent-suite.js';
import { agentInstall, nativeWriteCase, planCallOf, toolCalls } from './helpers/agent-runs.js';
import { REPO } from './helpers/run-vitest.js';

/**
 * The Hermes adapter against the real Hermes (below) and against a stand-in that speaks the same
 * ACP shapes (test/helpers/hermes-standin.mjs), the fast double for the adapter's edge cases: a
 * title-only call, a command longer than the title.
 */
const STANDIN = join(REPO, 'test/helpers/hermes-standin.mjs');

defineAgentSuite({
  title: 'Hermes adapter (against the ACP stand-in)',
  programs: [],
  // The stand-in is a script of this repository: confined, it also reads the packages it imports.
  agent: (server, extra) =>
    hermesAgent({
      model: 'vera-scripted',
      baseURL: server.url,
      apiKeyEnv: 'VERA_TEST_NO_KEY',
      binary: STANDIN,
      readOnly: [join(REPO, 'node_modules')],
      ...extra,
    }),
  agentId: 'hermes:vera-scripted',
  processName: 'hermes-standin.mjs',
  nativeDirective: (text) => `ACTION: terminal {"command": "printf '${text}' > out.txt"}`,
  shellDirective: (command) => `ACTION: terminal ${JSON.stringify({ command })}`,
  nativeTool: 'shell',
  // Real Hermes (below) passes the reviewer's checks.
  reviewer: 'stand-in',
  checkRequests(requests) {
    const model = requests.filter((r) => r.path === '/v1/chat/completions');
    expect(model[0]!.conversation!.tools.map((t) => t.name)).toContain('mcp__vera__forward_email');
  },
});

/**
 * Hermes itself (`hermes-agent` from PyPI, scripts/install-agents.sh hermes → .agents/hermes/venv)
 * over its ACP server against the scripted model, confined like the other CLIs.
 */
defineAgentSuite({
  title: 'Hermes Agent',
  programs: [HERMES_PROGRAM],
  agent: (server, extra) => hermesAgent({ model: 'vera-scripted', baseURL: server.url, apiKeyEnv: 'VERA_TEST_NO_KEY', ...extra }),
  agentId: 'hermes:vera-scripted',
  processName: 'hermes',
  nativeDirective: (text) => `ACTION: terminal {"command": "printf '${text}' > out.txt"}`,
  shellDirective: (command) => `ACTION: terminal ${JSON.stringify({ command })}`,
  nativeTool: 'shell',
  budgetSeconds: 180,
  reviewer: {
    ownTools: ['terminal', 'read_file', 'write_file', 'patch', 'execute_code'],
    systemPrompt: /Hermes/,
    // What the installed program says of itself (`hermes --version`, kept by install-agents.sh): "Hermes Agent v0.19.0 (…)".
    installedVersion: () => /Hermes Agent v(\S+)/.exec(readFileSync(join(agentsDir(), 'hermes/version.txt'), 'utf8'))![1]!,
    // One `hermes acp` process for the session: its turns end without an exit.
    programPerTurn: false,
  },
  checkRequests(requests) {
    const model = requests.filter((r) => r.path === '/v1/chat/completions');
    expect(model.length).toBeGreaterThan(0);
    expect(model[0]!.conversation!.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__vera__forward_email', 'terminal']));
  },
});

/**
 * Hermes' real ACP shapes (acp_adapter/tools.py), sent by the stand-in: its own tools come without
 * rawInput or rawOutput, titled `terminal: <first 80 characters>`. The adapter takes the full
 * command from the `$ <command>` start content and a write's path and text from its diff block —
 * and where only the title carries them, records the preview flagged as truncated.
 */
describe.skipIf(agentInstall([]).skip)('Hermes adapter: the ACP shapes Hermes really sends (stand-in)', () => {
  let server: StartedModelServer;
  beforeAll(async () => {
    server = await startScriptedModelServer({ policy: 'naive' });
  });
  afterAll(async () => {
    await server?.close();
  });
  const agent = (env: Record<string, string> = {}) =>
    hermesAgent({ model: 'vera-scripted', baseURL: server.url, apiKeyEnv: 'VERA_TEST_NO_KEY', binary: STANDIN, readOnly: [join(REPO, 'node_modules')], env });
  const longCommand = `printf '%s\\n' "${'a long line of text that goes well past what a title shows '.repeat(2).trim()}" > long.txt && wc -c long.txt`;
  const spec = () => {
    const base = nativeWriteCase(`ACTION: terminal ${JSON.stringify({ command: longCommand })}`, 'shell', 60);
    // Over the email gateway, which has no write_file of its own: a plan's write_file is then Hermes' (beside a
    // gateway's write_file, the scripted model takes the gateway's, as a case's plan means it).
    return {
      ...base,
      taxonomy: { ...base.taxonomy, environment: 'email' },
      init: [],
      plan: {
        task: [...(base.plan?.task ?? []), planCallOf(`ACTION: write_file ${JSON.stringify({ path: 'notes/plan.md', content: 'step one\nstep two' })}`)],
      },
    };
  };

  it('a command longer than the title is recovered whole from the start content; a write from its diff; real start times and durations', async () => {
    const before = Date.now();
    const { record } = await runCase({ spec: spec(), threatModel: 'benign', agent: agent(), recordDir: false });
    expect(record.error).toBeUndefined();
    const native = toolCalls(record).filter((c) => c.origin === 'agent');
    expect(native.map((c) => c.tool)).toEqual(['shell', 'write_file']);
    const [shell, write] = native;
    expect(longCommand.length).toBeGreaterThan(80);
    expect(shell!.args).toEqual({ command: longCommand });
    expect(shell!.agentTool).toBe('terminal');
    expect(shell!.argsTruncated).toBeUndefined();
    expect(JSON.stringify(shell!.result)).toMatch(/long\.txt/);
    expect(write!.args).toEqual({ path: 'notes/plan.md', content: 'step one\nstep two' });
    expect(shell!.at).toBeGreaterThanOrEqual(before);
    expect(shell!.durationMs).toBeGreaterThan(0);
    expect(write!.at).toBeGreaterThanOrEqual(shell!.at + shell!.durationMs);
  });

  it('where only the title carries the arguments, the preview is recorded and flagged argsTruncated', async () => {
    const { record } = await runCase({ spec: spec(), threatModel: 'benign', agent: agent({ HERMES_STANDIN_BARE: '1' }), recordDir: false });
    expect(record.error).toBeUndefined();
    const [shell, write] = toolCalls(record).filter((c) => c.origin === 'agent');
    expect(shell!.argsTruncated).toBe(true);
    expect(String(shell!.args.command)).toMatch(/\.\.\.$/);
    expect(String(shell!.args.command).length).toBe(80);
    expect(longCommand.startsWith(String(shell!.args.command).slice(0, 77))).toBe(true);
    expect(write).toMatchObject({ tool: 'write_file', args: { path: 'notes/plan.md' }, argsTruncated: true });
  });
});
