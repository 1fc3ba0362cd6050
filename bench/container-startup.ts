/**
 * Container sandbox start-up costs: cold start (a new container per case) against the warm pool
 * (a started container reset between cases), with the in-process backend for scale.
 *
 *   npx tsx bench/container-startup.ts [runs]        (default 9 runs; needs Docker and the image)
 *
 * Each figure is the median of `runs` measurements after one unmeasured warm-up (which pays for
 * loading testcontainers). "start" is `backend.start()` until the sandbox answers (environments
 * files + email created); "stop" is `sandbox.stop()`: remove the container, or reset it for the pool.
 */
import { ContainerBackend } from '../sandbox/backends/container-backend.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { dockerStatus } from '../sandbox/container/docker-cli.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';

process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';

const runs = Number(process.argv[2] ?? 9);
const spec = { environments: ['files', 'email'], label: 'bench' };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function measure(backend: SandboxBackend): Promise<{ start: number[]; stop: number[] }> {
  const start: number[] = [];
  const stop: number[] = [];
  for (let i = 0; i <= runs; i++) {
    let t = performance.now();
    const sandbox = await backend.start(spec);
    const started = performance.now() - t;
    // One tool call, so the sandbox is used as a case would use it.
    await sandbox.callTool('list_files', {});
    t = performance.now();
    await sandbox.stop();
    const stopped = performance.now() - t;
    if (i === 0) continue; // warm-up
    start.push(started);
    stop.push(stopped);
  }
  return { start, stop };
}

const docker = dockerStatus();
if (!docker.ok) {
  console.error(`container-startup: ${docker.reason}`);
  process.exit(1);
}

const cold = new ContainerBackend();
const pooled = new ContainerBackend({ pool: { size: 1 } });
try {
  const rows: Array<[string, { start: number[]; stop: number[] }]> = [];
  rows.push(['in-process', await measure(new InProcessBackend())]);
  rows.push(['container, cold (new container per case)', await measure(cold)]);
  await pooled.warm();
  rows.push(['container, warm pool (reset between cases)', await measure(pooled)]);

  const fmt = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 0)} ms`.padStart(10);
  console.log(`container sandbox start-up, median of ${runs} runs (image ${cold.image}, node ${process.version})`);
  console.log(`${'backend'.padEnd(44)}${'start'.padStart(10)}${'stop'.padStart(10)}${'min start'.padStart(12)}${'max start'.padStart(12)}`);
  for (const [name, m] of rows) {
    console.log(`${name.padEnd(44)}${fmt(median(m.start))}${fmt(median(m.stop))}  ${fmt(Math.min(...m.start))}  ${fmt(Math.max(...m.start))}`);
  }
} finally {
  await cold.close();
  await pooled.close();
}
