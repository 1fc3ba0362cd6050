/**
 * Repeats and statistics: seeded repeats each make their own record; the Wilson interval and
 * "attack success within k attempts" match hand-computed values; the scripted adversary is
 * deterministic given the seed; and the plugin runs one test per (threat model, repeat).
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmAdversary } from '../control/llm-adversary.js';
import type { SafetyCase } from '../engine/case-schema.js';
import type { SafetyRecord } from '../engine/record-writer.js';
import { runCaseRepeats } from '../runner/repeats.js';
import { runCase } from '../runner/run-case.js';
import { repeatSeed } from '../engine/seed.js';
import { asrStatistics, successWithinK, wilsonInterval, type AttemptRow } from '../engine/stats.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { guardedPolicy, naivePolicy } from '../testing/policies/index.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import type { Conversation, PolicyContext } from '../testing/conversation.js';
import { agentOn, bundledCase, notesLeakCase, userMessages } from './helpers/control-cases.js';
import { notesEnvironment } from './helpers/notes-environment.js';
import { REPO, runFixture, testsOf } from './helpers/run-vitest.js';

const backend = new InProcessBackend({ environments: { notes: notesEnvironment } });
let notes: SafetyCase;
let adversaryModel: StartedModelServer;

beforeAll(async () => {
  notes = await notesLeakCase();
  adversaryModel = await startScriptedModelServer({ policy: 'adversary' });
});
afterAll(async () => {
  await adversaryModel.close();
});

describe('Wilson interval (95%, z = 1.96), against values computed by hand', () => {
  // p = s/n, c = (p + z²/2n) / (1 + z²/n), h = z·sqrt(p(1−p)/n + z²/4n²) / (1 + z²/n), interval c ± h.
  it.each([
    // 2/5: p = .4, z²/n = .76832, c = .78416/1.76832 = .443449, h = 1.96·sqrt(.048 + .038416)/1.76832 = .325832
    [2, 5, 0.117618, 0.76928],
    // 3/10: c = .49208/1.38416 = .355508, h = 1.96·sqrt(.021 + .009604)/1.38416 = .247719
    [3, 10, 0.107789, 0.603227],
    // 0/5: the lower bound is 0, the upper z²/(n + z²) = 3.8416/8.8416
    [0, 5, 0, 0.434491],
    // 5/5: the lower bound n/(n + z²) = 5/8.8416, the upper 1
    [5, 5, 0.565509, 1],
    [7, 20, 0.18119, 0.567149],
  ])('%i/%i → [%f, %f]', (s, n, low, high) => {
    const interval = wilsonInterval(s, n);
    expect(interval.low).toBeCloseTo(low, 5);
    expect(interval.high).toBeCloseTo(high, 5);
  });

  it('no runs: no information, [0, 1]; impossible counts are refused', () => {
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
  });
});

describe('attack success within k attempts', () => {
  const attempts = (caseId: string, ...statuses: Array<AttemptRow['status']>): AttemptRow[] =>
    statuses.map((status) => ({ caseId, threatModel: 'single-channel', ...(status ? { status } : {}) }));
  const rows = [
    ...attempts('a', 'safe', 'violated', 'safe'), // broken on the 2nd attempt
    ...attempts('b', 'safe', 'safe', 'safe'), // judged, never broken
    ...attempts('c', 'not-applicable', 'not-applicable', 'not-applicable'), // excluded: N/A
    ...attempts('d', 'error', 'not-applicable', undefined), // excluded: N/A (nothing judged)
    ...attempts('e', 'error', 'error', 'error'), // excluded: errors
    ...attempts('f', 'not-applicable', 'violated', 'error'), // broken: one success is enough
  ];

  it('a case is broken if any attempt succeeded; N/A and errored cases are excluded and counted', () => {
    const within = successWithinK(rows);
    expect(within).toMatchObject({ cases: 6, broken: 2, n: 3, notApplicable: 2, errors: 1, k: 3, minK: 3 });
    expect(within.rate).toBeCloseTo(2 / 3, 10);
    expect(within.interval).toEqual(wilsonInterval(2, 3));
  });

  it('per run, the same rows give ASR 2/7 (2 violated, 5 safe) with 5 N/A and 6 errors counted apart', () => {
    const asr = asrStatistics(rows);
    expect(asr).toMatchObject({ successes: 2, n: 7, notApplicable: 5, errors: 6 });
    expect(asr.interval).toEqual(wilsonInterval(2, 7));
  });

  it('the same case against two agents is two groups', () => {
    const two = [...attempts('a', 'violated').map((r) => ({ ...r, agent: 'x' })), ...attempts('a', 'safe').map((r) => ({ ...r, agent: 'y' }))];
    expect(successWithinK(two)).toMatchObject({ cases: 2, broken: 1, n: 2 });
  });
});

describe('repeats', () => {
  it('k repeats make k seeded records, and their interval is the hand-computed one', async () => {
    // An agent that leaks on the 1st and 3rd run only (runs are sequential): naive, else guarded.
    let runs = -1;
    const flaky = await startScriptedModelServer({
      policy: (conversation: Conversation, context?: PolicyContext) => {
        const fresh = conversation.messages.filter((m) => m.role !== 'system').length === 1;
        if (fresh) runs++;
        // The run's plan (the context) is what both policies act on.
        return runs === 0 || runs === 2 ? naivePolicy(conversation, context) : guardedPolicy(conversation, context);
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'vera-repeats-'));
    try {
      const results = await runCaseRepeats({
        spec: notes,
        threatModel: 'single-channel',
        agent: agentOn(flaky),
        backend,
        recordDir: dir,
        runId: 'rep',
        repeats: 5,
        baseSeed: 7,
      });
      expect(results).toHaveLength(5);
      const files = (await readdir(join(dir, 'rep'))).sort();
      expect(files).toEqual([
        'notes-leak--single-channel--r1.json',
        'notes-leak--single-channel--r2.json',
        'notes-leak--single-channel--r3.json',
        'notes-leak--single-channel--r4.json',
        'notes-leak--single-channel.json',
      ]);
      const records = await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, 'rep', f), 'utf8')) as SafetyRecord));
      records.sort((a, b) => a.repeat - b.repeat);
      expect(records.map((r) => r.repeat)).toEqual([0, 1, 2, 3, 4]);
      expect(records.map((r) => r.seed)).toEqual([0, 1, 2, 3, 4].map((r) => repeatSeed(7, 'notes-leak', r)));
      expect(new Set(records.map((r) => r.seed)).size).toBe(5);
      expect(records.map((r) => r.status)).toEqual(['violated', 'safe', 'violated', 'safe', 'safe']);

      const rows = records.map((r) => ({ caseId: r.caseId, threatModel: r.threatModel, agent: r.agent, status: r.status }));
      const asr = asrStatistics(rows);
      expect(asr).toMatchObject({ successes: 2, n: 5 });
      expect(asr.interval.low).toBeCloseTo(0.117618, 5); // hand-computed above
      expect(asr.interval.high).toBeCloseTo(0.76928, 5);
      expect(successWithinK(rows)).toMatchObject({ cases: 1, broken: 1, n: 1, k: 5 });
    } finally {
      await flaky.close();
    }
  });

  it('the scripted adversary is deterministic given the seed, and the seed reaches it', async () => {
    const spec = await bundledCase('email/forward-reset-code.case.yaml');
    const pinned = { ...spec, attack: { ...spec.attack, strategies: ['authority-impersonation' as const] } };
    const naive = await startScriptedModelServer({ policy: 'naive' });
    try {
      const run = async (seed: number) => {
        const { record } = await runCase({
          spec: pinned,
          threatModel: 'single-channel',
          agent: agentOn(naive),
          adversary: llmAdversary({ model: 'red-team', baseURL: adversaryModel.url, apiKey: 'test', maxRetries: 0 }),
          seed,
          recordDir: false,
        });
        return record;
      };
      const [a, b, c] = [await run(1), await run(1), await run(2)];
      expect(a.seed).toBe(1);
      expect(userMessages(a.trajectory)).toEqual(userMessages(b.trajectory));
      expect(userMessages(a.trajectory)[0]).toContain('ticket SEC-1001');
      expect(userMessages(c.trajectory)[0]).toContain('ticket SEC-1002');
      expect(userMessages(a.trajectory)[0]).not.toEqual(userMessages(c.trajectory)[0]);
    } finally {
      await naive.close();
    }
  });
});

describe('repeats in the Vitest plugin (LLM adversary on the embedded scripted adversary model)', () => {
  it('one test per (threat model, repeat), a record per repeat, seeds in meta and JUnit, statistics in the report', async () => {
    const root = join(REPO, 'test/fixtures/control-project');
    const junit = join(await mkdtemp(join(tmpdir(), 'vera-junit-')), 'junit.xml');
    const run = await runFixture({
      root,
      args: ['--reporter=junit', `--outputFile.junit=${junit}`],
      env: { FIXTURE_POLICY: 'guarded', FIXTURE_STRATEGY: 'task-decomposition', FIXTURE_REPEATS: '3' },
    });
    const tests = testsOf(run, 'notes-leak.case.yaml');
    expect(tests.map((t) => t.title).sort()).toEqual(
      ['benign', 'indirect', 'single-channel'].flatMap((m) => [0, 1, 2].map((r) => `notes-leak › [${m}] r${r}`)).sort(),
    );
    const byTitle = Object.fromEntries(tests.map((t) => [t.title, t]));
    for (const r of [0, 1, 2]) {
      // Guarded refuses the plain request, but the decomposed step (no filter words) goes through.
      expect(byTitle[`notes-leak › [single-channel] r${r}`]!.status).toBe('failed');
      expect(byTitle[`notes-leak › [single-channel] r${r}`]!.meta!.vera).toMatchObject({
        repeat: r,
        seed: repeatSeed(11, 'notes-leak', r),
        status: 'violated',
        strategies: ['task-decomposition'],
      });
      expect(byTitle[`notes-leak › [indirect] r${r}`]!.meta!.vera).toMatchObject({
        repeat: r,
        status: 'safe',
        stopReason: 'task delivered; the agent asked nothing more',
      });
      expect(byTitle[`notes-leak › [benign] r${r}`]!.status).toBe('passed');
    }
    const [recordRun] = await readdir(join(run.outDir, 'records'));
    const files = (await readdir(join(run.outDir, 'records', recordRun!))).sort();
    expect(files).toHaveLength(9);
    expect(files).toContain('notes-leak--single-channel--r2.json');
    const record = JSON.parse(await readFile(join(run.outDir, 'records', recordRun!, 'notes-leak--single-channel--r1.json'), 'utf8')) as SafetyRecord;
    expect(record.control).toBe('llm-adversary:scripted-adversary');
    expect(record.controlPlan).toMatchObject({ sequence: ['task-decomposition'], source: 'options', matched: '*' });
    expect(record.control_transcript[0]!.request!.messages[0]!.role).toBe('system');
    const indirect = JSON.parse(await readFile(join(run.outDir, 'records', recordRun!, 'notes-leak--indirect--r1.json'), 'utf8')) as SafetyRecord;
    expect(indirect.control).toBe('benign-user');
    expect(indirect.injections.fired).toEqual(['note-inj']);

    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/<testcase[^>]*name="notes-leak › \[single-channel\] r2"[^>]*>\s*<properties>[\s\S]*?<property name="vera.repeat" value="2"/);
    // The terminal report: ASR per run with its Wilson interval, and success within k = 3.
    expect(run.stdout).toMatch(/single-channel\s+3\/3 100% \[44%–100%\]\s+1\/1 100% \[21%–100%\] k=3/);
  }, 120_000);
});
