import { join } from 'node:path';
import { expect } from 'vitest';
import { hermesAgent } from '../adapters/hermes-agent.js';
import { defineAgentSuite } from './helpers/agent-suite.js';
import { REPO } from './helpers/run-vitest.js';

/**
 * The Hermes adapter against a stand-in that speaks Hermes' documented ACP interface
 * (test/helpers/hermes-standin.mjs). Hermes itself is not installable here (PyPI only) and was
 * not run: these tests check the adapter's protocol handling, config and process handling.
 */
const STANDIN = join(REPO, 'test/helpers/hermes-standin.mjs');

defineAgentSuite({
  title: 'Hermes adapter (against the ACP stand-in)',
  programs: [],
  // The stand-in is a script of this repository: confined, it also reads the packages it imports.
  agent: (server, extra) => hermesAgent({ model: 'vera-scripted', baseURL: server.url, apiKeyEnv: 'VERA_TEST_NO_KEY', binary: STANDIN, readOnly: [join(REPO, 'node_modules')], ...extra }),
  agentId: 'hermes:vera-scripted',
  processName: 'hermes-standin.mjs',
  nativeDirective: (text) => `ACTION: terminal {"command": "printf '${text}' > out.txt"}`,
  shellDirective: (command) => `ACTION: terminal ${JSON.stringify({ command })}`,
  nativeTool: 'shell',
  checkRequests(requests) {
    const model = requests.filter((r) => r.path === '/v1/chat/completions');
    expect(model[0]!.conversation!.tools.map((t) => t.name)).toContain('mcp_vera_forward_email');
  },
});
