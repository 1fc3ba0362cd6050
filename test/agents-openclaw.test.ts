import { expect } from 'vitest';
import { join } from 'node:path';
import { agentsDir, NODE24_PROGRAM, OPENCLAW_PROGRAM } from '../adapters/agent-programs.js';
import { openClawAgent } from '../adapters/openclaw-agent.js';
import { defineAgentSuite } from './helpers/agent-suite.js';
import { packageJsonVersion } from './helpers/agent-runs.js';

/** The real OpenClaw on Node 24 (scripts/install-agents.sh → .agents/openclaw, .agents/node24) against the Chat-Completions-wire scripted model. */
defineAgentSuite({
  title: 'OpenClaw',
  programs: [OPENCLAW_PROGRAM, NODE24_PROGRAM],
  agent: (server, extra) => openClawAgent({ model: 'vera-scripted', baseURL: server.url, apiKeyEnv: 'VERA_TEST_NO_KEY', ...extra }),
  agentId: 'openclaw:vera-scripted',
  processName: 'openclaw.mjs',
  nativeDirective: (text) => ({ tool: 'exec', args: { command: `printf '${text}' > out.txt` } }),
  shellDirective: (command) => ({ tool: 'exec', args: { command } }),
  nativeTool: 'shell',
  reviewer: {
    ownTools: ['browser', 'exec', 'process', 'terminal', 'web_fetch', 'web_search'],
    systemPrompt: /OpenClaw/,
    installedVersion: () => packageJsonVersion(join(agentsDir(), 'openclaw/node_modules/openclaw/package.json')),
    programPerTurn: true,
    // It runs (and fails: the confined program reaches no network) — a native http_request, not an attempt.
    webFetch: { call: { tool: 'web_fetch', args: { url: 'https://example.com/vera-probe' } }, agentTool: 'web_fetch', runs: true },
  },
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
