/**
 * Container sandbox throughput: the bundled email and files cases × their threat models, run with
 * `runCase` through the container backend with a warm pool of P containers (P runs at a time),
 * against the reference agent on a zero-latency scripted model; in-process for scale.
 *   npx tsx bench/container-throughput.ts [--pools 1,4,64] [--repeat 4] [--json out.json]   (needs Docker and the image)
 * A pooled container is reset between cases; the reset times (p50, p99) are reported per pool.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { referenceAgent } from '../dist/adapters/reference-agent.js';
import { loadCaseSuite } from '../dist/engine/case-loader.js';
import { runCase } from '../dist/runner/run-case.js';
import { ContainerBackend } from '../dist/sandbox/backends/container-backend.js';
import { InProcessBackend } from '../dist/sandbox/backends/in-process-backend.js';
import { dockerStatus } from '../dist/sandbox/container/docker-cli.js';
import type { SandboxBackend } from '../dist/sandbox/sandbox.js';
import { startScriptedModelServer } from '../dist/testing/scripted-model-server.js';
import { quantile } from './quantile.js';

process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
const args = process.argv.slice(2);
const pools = (args.includes('--pools') ? args[args.indexOf('--pools') + 1]! : '1,4').split(',').map(Number);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;

const docker = dockerStatus();
if (!docker.ok) {
  console.error(`container-throughput: ${docker.reason}`);
  process.exit(1);
}

const dirs = ['cases/email', 'cases/files'];
const files = (await Promise.all(dirs.map(async (d) => (await readdir(d)).filter((f) => f.endsWith('.case.yaml')).map((f) => join(d, f))))).flat().sort();
// Cases that mount only environments the container image serves with the in-process tools.
const specs = (await Promise.all(files.map((f) => loadCaseSuite(f)))).flat().map((c) => c.spec);
// Repeated so that even a pool of 64 goes through several resets per container.
const repeat = Number(args.includes('--repeat') ? args[args.indexOf('--repeat') + 1] : 1);
const runs = Array.from({ length: repeat }, () => specs.flatMap((spec) => spec.threatModels.map((threatModel) => ({ spec, threatModel })))).flat();
const model = await startScriptedModelServer({ policy: 'naive', recordRequests: false });
const agent = referenceAgent({ model: 'scripted', baseURL: model.url, apiKey: 'bench', maxRetries: 0 });

async function throughput(backend: SandboxBackend, concurrency: number): Promise<{ seconds: number; runsPerSecond: number }> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < runs.length) {
        const r = runs[next++]!;
        const { record } = await runCase({ spec: r.spec, threatModel: r.threatModel, agent, backend, recordDir: false });
        if (record.status === 'error') throw new Error(`${record.caseId} [${record.threatModel}]: ${record.error?.message}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds, runsPerSecond: runs.length / seconds };
}

const rows: Array<{ backend: string; concurrency: number; seconds: number; runsPerSecond: number; resetP50Ms?: number; resetP99Ms?: number; resets?: number }> =
  [];
try {
  const inProcess = new InProcessBackend();
  await throughput(inProcess, 4); // warm-up
  for (const c of pools) rows.push({ backend: 'in-process', concurrency: c, ...(await throughput(inProcess, c)) });
  for (const size of pools) {
    const backend = new ContainerBackend({ pool: { size } });
    try {
      await backend.warm();
      const measured = await throughput(backend, size);
      const resets = backend.resetDurations;
      rows.push({
        backend: `container, pool of ${size}`,
        concurrency: size,
        ...measured,
        resets: resets.length,
        resetP50Ms: quantile(resets, 0.5),
        resetP99Ms: quantile(resets, 0.99),
      });
    } finally {
      await backend.close();
    }
  }
} finally {
  await model.close();
}
console.log(`container throughput: ${runs.length} case-runs (${specs.length} email/files cases × their threat models)`);
for (const r of rows) {
  const reset = r.resets ? `  reset p50 ${r.resetP50Ms!.toFixed(1)} ms, p99 ${r.resetP99Ms!.toFixed(1)} ms (${r.resets} resets)` : '';
  console.log(
    `  ${r.backend.padEnd(22)} ${String(r.concurrency).padStart(2)} at a time  ${r.seconds.toFixed(2).padStart(6)} s  ${r.runsPerSecond.toFixed(1).padStart(6)} runs/s${reset}`,
  );
}
if (jsonOut) await writeFile(jsonOut, `${JSON.stringify({ runs: runs.length, rows }, null, 2)}\n`);
