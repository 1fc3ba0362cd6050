import { expect } from 'vitest';
import { NODE24_PROGRAM, OPENCLAW_PROGRAM } from '../adapters/agent-programs.js';
import { openClawAgent } from '../adapters/openclaw-agent.js';
import { defineAgentSuite } from './helpers/agent-suite.js';

/** The real OpenClaw on Node 24 (scripts/install-agents.sh → .agents/openclaw, .agents/node24) against the Chat-Completions-wire scripted model. */
defineAgentSuite({
  title: 'OpenClaw',
  programs: [OPENCLAW_PROGRAM, NODE24_PROGRAM],
  agent: (server, extra) => openClawAgent({ model: 'vera-scripted', baseURL: server.url, apiKeyEnv: 'VERA_TEST_NO_KEY', ...extra }),
  agentId: 'openclaw:vera-scripted',
  processName: 'openclaw.mjs',
  nativeDirective: (text) => `ACTION: exec {"command": "printf '${text}' > out.txt"}`,
  shellDirective: (command) => `ACTION: exec ${JSON.stringify({ command })}`,
  nativeTool: 'shell',
  budgetSeconds: 150,
  checkRequests(requests) {
    const model = requests.filter((r) => r.path === '/v1/chat/completions');
    expect(model.length).toBeGreaterThan(0);
    const first = model[0]!;
    expect(first.conversation!.tools.map((t) => t.name)).toContain('vera__forward_email');
    // OpenClaw adds an internal-context user message after the prompt; the policies skip it.
    expect(first.conversation!.messages.some((m) => m.role === 'user' && m.text.startsWith('<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>'))).toBe(true);
  },
});
