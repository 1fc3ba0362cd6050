import { expect } from 'vitest';
import { CLAUDE_CODE_PROGRAM } from '../adapters/agent-programs.js';
import { claudeCodeAgent } from '../adapters/claude-code-agent.js';
import { defineAgentSuite } from './helpers/agent-suite.js';

/** The real Claude Code (scripts/install-agents.sh → .agents/claude-code) against the Anthropic-wire scripted model. */
defineAgentSuite({
  title: 'Claude Code',
  programs: [CLAUDE_CODE_PROGRAM],
  agent: (server, extra) => claudeCodeAgent({ model: 'vera-scripted', baseURL: server.origin, apiKeyEnv: 'VERA_TEST_NO_KEY', ...extra }),
  agentId: 'claude-code:vera-scripted',
  processName: 'claude',
  nativeDirective: (text) => `ACTION: Bash {"command": "printf '${text}' > out.txt"}`,
  shellDirective: (command) => `ACTION: Bash ${JSON.stringify({ command })}`,
  nativeTool: 'shell',
  checkRequests(requests) {
    // Claude Code probes its base URL, then streams /v1/messages?beta=true.
    expect(requests.some((r) => r.method === 'HEAD' && r.path === '/' && r.status === 200)).toBe(true);
    const model = requests.filter((r) => r.path === '/v1/messages');
    expect(model.length).toBeGreaterThan(0);
    expect(model.every((r) => r.status === 200)).toBe(true);
    const tools = (model[0]!.body as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(tools).toContain('mcp__vera__forward_email');
    expect(tools).toContain('Bash');
  },
});
