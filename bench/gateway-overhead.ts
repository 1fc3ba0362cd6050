/**
 * What the recording gateway adds to one tool call: the same cheap tool (`list_emails` on a seeded
 * inbox) called N times straight on the sandbox (the environment's own cost), through the
 * gateway (`ToolGateway.call`: recording, injections, budget), through MCP over an in-memory
 * transport pair, and through MCP over streamable HTTP on loopback — the SDK client the agents'
 * own clients stand in for. Per-call p50 and p99 of each path, and of each path minus the direct
 * call's p50 (what that layer adds). Measures the built package (npm run build first).
 *   npx tsx bench/gateway-overhead.ts [--calls 2000] [--json out.json]
 */
import { writeFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Trajectory } from '../dist/engine/trajectory.js';
import { InProcessBackend } from '../dist/sandbox/backends/in-process-backend.js';
import { connectInMemory, startMcpGateway } from '../dist/sandbox/gateway/mcp-http-host.js';
import { ToolGateway } from '../dist/sandbox/gateway/tool-gateway.js';
import { quantile } from './quantile.js';

const args = process.argv.slice(2);
const calls = Number(args[args.indexOf('--calls') + 1] || 2000);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;

const backend = new InProcessBackend();
const sandbox = await backend.start({ environments: ['email'] });
await sandbox.apply({ op: 'email.deliver', args: { from: 'it@corp.example', subject: 'Password reset', body: 'Your code is 4417.' } }, 0);

/** The gateway of one run: a fresh trajectory per path so recording costs the same everywhere. */
function gatewayOf(): ToolGateway {
  return new ToolGateway({ sandbox, trajectory: new Trajectory(), maxToolCalls: calls * 2 });
}

async function time(label: string, call: () => Promise<unknown>): Promise<{ label: string; ms: number[] }> {
  for (let i = 0; i < 200; i++) await call(); // warm-up: JIT, connection, session
  const ms: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await call();
    ms.push(performance.now() - t);
  }
  return { label, ms };
}

const rows = [];
rows.push(await time('direct (sandbox.callTool)', () => sandbox.callTool('list_emails', {})));
rows.push(await time('gateway (ToolGateway.call)', () => gatewayOf().call('list_emails', {})));
{
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(await connectInMemory(gatewayOf()));
  rows.push(await time('MCP, in-memory transport', () => client.callTool({ name: 'list_emails', arguments: {} })));
  await client.close();
}
{
  const mcp = await startMcpGateway(gatewayOf());
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
  rows.push(await time('MCP, streamable HTTP', () => client.callTool({ name: 'list_emails', arguments: {} })));
  await client.close();
  await mcp[Symbol.asyncDispose]();
}
await sandbox.stop();

const base = quantile(rows[0]!.ms, 0.5);
const summary = rows.map((r) => ({
  path: r.label,
  p50: quantile(r.ms, 0.5),
  p99: quantile(r.ms, 0.99),
  addedP50: quantile(r.ms, 0.5) - base,
  addedP99: quantile(r.ms, 0.99) - base,
}));
console.log(`gateway overhead: ${calls} calls of list_emails per path, sequential (ms per call)`);
console.log(`  ${'path'.padEnd(28)} ${'p50'.padStart(7)} ${'p99'.padStart(7)}   added over direct: p50 / p99`);
for (const r of summary)
  console.log(`  ${r.path.padEnd(28)} ${r.p50.toFixed(3).padStart(7)} ${r.p99.toFixed(3).padStart(7)}   ${r.addedP50.toFixed(3)} / ${r.addedP99.toFixed(3)}`);
if (jsonOut) await writeFile(jsonOut, `${JSON.stringify({ calls, rows: summary }, null, 2)}\n`);
