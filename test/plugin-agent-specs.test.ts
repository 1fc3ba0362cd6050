import { describe, expect, it } from 'vitest';
import { agentSpec } from '../plugin/options.js';
import { resolveAgent } from '../plugin/resolve-parts.js';

describe('plugin agent specs for the real agent CLIs', () => {
  it.each([
    [{ type: 'codex', model: 'gpt-5-codex', baseURL: 'https://api.example/v1' }, 'codex:gpt-5-codex'],
    [{ type: 'claude-code', model: 'claude-sonnet-4-5' }, 'claude-code:claude-sonnet-4-5'],
    [{ type: 'claude-code' }, 'claude-code:default'],
    [{ type: 'openclaw', model: 'gpt-4o-mini', api: 'openai-completions' }, 'openclaw:gpt-4o-mini'],
    [
      { type: 'gemini-cli', model: 'gemini-2.5-flash', baseURL: 'http://127.0.0.1:9/', maxRetries: 2, extraSettings: { ui: { hideTips: true } } },
      'gemini-cli:gemini-2.5-flash',
    ],
    [
      { type: 'qwen-code', model: 'qwen3-coder-plus', baseURL: 'https://api.example/v1', maxRetries: 1, node: '/opt/node24/bin/node' },
      'qwen-code:qwen3-coder-plus',
    ],
    [{ type: 'opencode', model: 'gpt-4o-mini', baseURL: 'https://api.example/v1', extraConfig: { instructions: ['AGENTS.md'] } }, 'opencode:gpt-4o-mini'],
    [{ type: 'kilo', model: 'gpt-4o-mini', baseURL: 'https://api.example/v1' }, 'kilo:gpt-4o-mini'],
    [{ type: 'hermes', model: 'hermes-4' }, 'hermes:hermes-4'],
    [{ type: 'python', entry: 'my_agent:run', python: '.venv/bin/python', model: 'gpt-4o-mini' }, 'python:my_agent:run'],
    [{ type: 'mcp-cli', name: 'mine', command: 'my-agent', args: ['--mcp', '{gatewayUrl}', '{message}'] }, 'mcp-cli:mine'],
  ])('%o resolves to the adapter %s', async (spec, id) => {
    const parsed = agentSpec.parse(spec);
    const adapter = await resolveAgent(parsed, process.cwd());
    expect(adapter.id).toBe(id);
    expect(typeof adapter.start).toBe('function');
  });

  it('rejects unknown fields and missing models with the field named', () => {
    const unknown = agentSpec.safeParse({ type: 'codex', model: 'x', wire: 'chat' });
    expect(unknown.success).toBe(false);
    expect(JSON.stringify(unknown.error?.issues)).toContain('wire');
    const missing = agentSpec.safeParse({ type: 'openclaw' });
    expect(missing.error?.issues[0]?.path).toEqual(['model']);
    const entry = agentSpec.safeParse({ type: 'python', entry: 'my_agent.run', model: 'm' });
    expect(entry.error?.issues[0]).toMatchObject({ path: ['entry'], message: 'write the entry as module:function, e.g. my_agent:run' });
  });
});
