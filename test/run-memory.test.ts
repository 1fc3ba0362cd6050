/**
 * A finished run is garbage: nothing that outlives it (the process, a client's listeners, Node's
 * own registries) may hold its session, and through it the run. Found by the library benchmark:
 * composite abort signals handed to the openai and MCP clients kept every run alive (≈40 KB each,
 * 4 GB over the benchmark's runs).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentAdapter } from '../adapters/adapter.js';
import { referenceAgent } from '../adapters/reference-agent.js';
import { runCase } from '../runner/run-case.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { loadCase } from './helpers/agent-runs.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function collect(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

describe('memory of finished runs', () => {
  let server: StartedModelServer;
  beforeAll(async () => {
    server = await startScriptedModelServer({ policy: 'naive', recordRequests: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("the reference agent's run (model requests and MCP calls with abort signals) leaves nothing reachable", async () => {
    const spec = await loadCase('cases/email/forward-reset-code.case.yaml');
    const refs: Array<WeakRef<object>> = [];
    const inner = referenceAgent({ model: 'scripted', baseURL: server.url, apiKey: 'x', maxRetries: 0 });
    // The context a session keeps: it reaches the run (its model route, its trajectory).
    const agent: AgentAdapter = { id: inner.id, start: (ctx) => (refs.push(new WeakRef(ctx)), inner.start(ctx)) };
    for (let i = 0; i < 3; i++) {
      const { record } = await runCase({ spec, threatModel: 'multi-channel', agent, recordDir: false });
      expect(record.verdict.status).toBe('violated');
      expect(record.trajectory.filter((e) => e.type === 'tool_call').length).toBeGreaterThan(0);
    }
    await collect();
    expect(refs).toHaveLength(3);
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
  });
});
