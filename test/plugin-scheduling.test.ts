import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { FIXTURE, runFixture, type VitestRun } from './helpers/run-vitest.js';

/**
 * The scheduler through the real Vitest CLI: a project of several case files runs its case runs
 * concurrently across files (Vitest alone would run one file at a time per worker), and only the
 * runs whose tests Vitest will run are started.
 */
const FILES = ['a', 'b', 'c', 'd', 'e', 'f'];
let dir: string;
let model: StartedModelServer;

beforeAll(async () => {
  dir = await mkdtemp(join(FIXTURE, '..', 'sched-'));
  await cp(join(FIXTURE, 'vitest.config.ts'), join(dir, 'vitest.config.ts'));
  await cp(join(FIXTURE, 'notes-environment.ts'), join(dir, 'notes-environment.ts'));
  await mkdir(join(dir, 'cases'));
  const source = await readFile(join(FIXTURE, 'cases/notes-leak.case.yaml'), 'utf8');
  for (const f of FILES) await writeFile(join(dir, `cases/${f}.case.yaml`), source.replace('id: notes-leak', `id: case-${f}`));
  // Every model answer takes 150 ms, like a provider: concurrency shows as requests in flight.
  model = await startScriptedModelServer({ policy: 'naive', latencyMs: 150 });
});
afterAll(async () => {
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[] = []): Promise<VitestRun> {
  return runFixture({
    root: dir,
    args,
    env: { FIXTURE_BASE_URL: model.url, FIXTURE_SCRIPTED: model.origin, FIXTURE_CONCURRENCY: '18', FIXTURE_PROVIDER: '{"maxRetries":2}' },
  });
}

describe('prefetch scheduling through Vitest', () => {
  it('keeps runs of several files in flight at once (more than one file holds)', async () => {
    const before = model.requests.length;
    const result = await run();
    const statuses = result.files.flatMap((f) => f.assertionResults.map((t) => t.status));
    expect(statuses).toHaveLength(FILES.length * 3);
    expect(statuses.filter((s) => s === 'failed')).toHaveLength(FILES.length * 2); // naive: single- and multi-channel violated
    // 3 tests per file; requests in flight beyond 3 prove runs of different files overlapped.
    expect(model.stats().maxInFlight).toBeGreaterThan(6);
    expect(model.requests.length).toBeGreaterThan(before);
    // With `provider` set, traffic went through the run-wide proxy, whose figures are in each
    // record and in the terminal's traffic line.
    const files = (await readdir(join(result.outDir, 'records'), { recursive: true })).filter((f) => f.endsWith('.json'));
    const record = JSON.parse(await readFile(join(result.outDir, 'records', files[0]!), 'utf8'));
    expect(record.provider.requests).toBeGreaterThan(0);
    expect(record.provider.byModel.scripted.requests).toBe(record.provider.requests);
    const total = model.requests.length - before;
    expect(result.stdout).toContain(`model traffic: ${total} model requests`);
  }, 120_000);

  it('starts only the runs of tests that will run (-t), and writes records only for them', async () => {
    const before = model.requests.length;
    const result = await run(['-t', '\\[benign\\]']);
    const ran = result.files.flatMap((f) => f.assertionResults.filter((t) => t.status !== 'skipped').map((t) => t.title));
    expect(ran.sort()).toEqual(FILES.map((f) => `case-${f} › [benign]`).sort());
    // Only benign runs reached the model: each of its requests carries the honest task, and none
    // the adversary's message (a single- or multi-channel run started ahead would show here).
    const requests = model.requests.slice(before);
    const firstUser = requests.map((r) => r.conversation?.messages.find((m) => m.role === 'user')?.text ?? '');
    expect(firstUser.filter((t) => !t.startsWith('Summarise my plan note.'))).toEqual([]);
    expect(requests.length).toBe(FILES.length * 2);
    const records = await readdir(join(result.outDir, 'records'), { recursive: true });
    expect(records.filter((r) => r.endsWith('.json')).sort()).toEqual(FILES.map((f) => expect.stringContaining(`case-${f}--benign.json`)));
  }, 120_000);
});
