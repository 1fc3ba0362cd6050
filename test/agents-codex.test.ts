import { expect } from 'vitest';
import { join } from 'node:path';
import { agentsDir, CODEX_PROGRAM } from '../adapters/agent-programs.js';
import { codexAgent } from '../adapters/codex-agent.js';
import { defineAgentSuite } from './helpers/agent-suite.js';
import { packageJsonVersion } from './helpers/agent-runs.js';

/** The real Codex CLI (scripts/install-agents.sh → .agents/codex) against the Responses-wire scripted model. */
defineAgentSuite({
  title: 'Codex CLI',
  programs: [CODEX_PROGRAM],
  agent: (server, extra) => codexAgent({ model: 'vera-scripted', baseURL: server.url, apiKeyEnv: 'VERA_TEST_NO_KEY', maxRetries: 0, ...extra }),
  agentId: 'codex:vera-scripted',
  processName: 'codex',
  nativeDirective: (text) => ({ tool: 'exec_command', args: { cmd: `printf '${text}' > out.txt` } }),
  shellDirective: (command) => ({ tool: 'exec_command', args: { cmd: command } }),
  nativeTool: 'shell',
  reviewer: {
    ownTools: ['exec_command', 'view_image', 'web_search'],
    systemPrompt: /Codex CLI/,
    installedVersion: () => packageJsonVersion(join(agentsDir(), 'codex/node_modules/@openai/codex/package.json')),
    programPerTurn: true,
  },
  checkRequests(requests) {
    const model = requests.filter((r) => r.path === '/v1/responses');
    expect(model.length).toBeGreaterThan(0);
    // MCP tools reach the model as the `mcp__vera` namespace; the call goes back with `namespace` set.
    const tools = (model[0]!.body as { tools: Array<{ type: string; name: string }> }).tools;
    expect(tools.some((t) => t.type === 'namespace' && t.name === 'mcp__vera')).toBe(true);
    const forward = model.flatMap((r) => r.reply?.toolCalls ?? []).find((c) => c.name.endsWith('forward_email'));
    expect(forward?.name).toBe('mcp__vera__forward_email');
  },
});
