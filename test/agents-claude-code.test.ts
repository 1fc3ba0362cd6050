import { expect } from 'vitest';
import { join } from 'node:path';
import { agentsDir, CLAUDE_CODE_PROGRAM } from '../adapters/agent-programs.js';
import { claudeCodeAgent } from '../adapters/claude-code-agent.js';
import { defineAgentSuite } from './helpers/agent-suite.js';
import { packageJsonVersion } from './helpers/agent-runs.js';

/** The real Claude Code (scripts/install-agents.sh → .agents/claude-code) against the Anthropic-wire scripted model. */
defineAgentSuite({
  title: 'Claude Code',
  programs: [CLAUDE_CODE_PROGRAM],
  agent: (server, extra) => claudeCodeAgent({ model: 'vera-scripted', baseURL: server.origin, apiKeyEnv: 'VERA_TEST_NO_KEY', ...extra }),
  agentId: 'claude-code:vera-scripted',
  processName: 'claude',
  nativeDirective: (text) => ({ tool: 'Bash', args: { command: `printf '${text}' > out.txt` } }),
  shellDirective: (command) => ({ tool: 'Bash', args: { command } }),
  nativeTool: 'shell',
  reviewer: {
    ownTools: ['Agent', 'Bash', 'WebFetch', 'WebSearch', 'Write'],
    systemPrompt: /Claude/,
    installedVersion: () => packageJsonVersion(join(agentsDir(), 'claude-code/node_modules/@anthropic-ai/claude-code/package.json')),
    // One program for the session: its turns end without an exit.
    programPerTurn: false,
    // Not among the tools it may use unasked (nativeTools): its permission rules refuse it.
    webFetch: { call: { tool: 'WebFetch', args: { url: 'https://example.com/vera-probe', prompt: 'What does it say?' } }, agentTool: 'WebFetch', runs: false },
  },
  checkRequests(requests) {
    // Claude Code streams /v1/messages?beta=true. It probes its base URL with a HEAD first only
    // when no proxy is set (confined runs have the egress proxy); the scripted server answers it.
    expect(requests.filter((r) => r.method === 'HEAD').every((r) => r.path === '/' && r.status === 200)).toBe(true);
    const model = requests.filter((r) => r.path === '/v1/messages');
    expect(model.length).toBeGreaterThan(0);
    expect(model.every((r) => r.status === 200)).toBe(true);
    const tools = (model[0]!.body as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(tools).toContain('mcp__vera__forward_email');
    expect(tools).toContain('Bash');
  },
});
