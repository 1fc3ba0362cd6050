/**
 * The bundled library against the embedded scripted policies: every case × threat model against the
 * naive policy violates when attacked, never when benign, and completes the task; a replay of every
 * fresh record agrees with its live run; the guarded policy on one case per family tells methods apart.
 * (test/library.test.ts checks what the library holds; the two files run in parallel.)
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { naiveProblems } from '../bench/library-gates.js';
import { asrBy, loadSuites, runLibrary, type LibraryRun } from '../bench/library-runs.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { REPO } from './helpers/run-vitest.js';

let cases: SafetyCase[];
beforeAll(async () => {
  cases = await loadSuites(join(REPO, 'cases/bench'));
}, 300_000);

describe('against the embedded scripted policies', () => {
  let naive: LibraryRun[];
  let guarded: LibraryRun[];
  beforeAll(async () => {
    naive = await runLibrary(cases, 'naive');
    // Guarded on one case of every family (the full figures are bench/library.ts's): enough to see methods apart.
    const sample = [...new Map(cases.map((c) => [c.tags[0], c])).values()];
    guarded = await runLibrary(sample, 'guarded');
  }, 900_000);
  afterAll(() => {
    naive = [];
    guarded = [];
  });

  it('naive is made to violate every adversarial run, no benign run, and does the honest task in every benign run', () => {
    expect(naive.length).toBe(cases.reduce((n, c) => n + c.threatModels.length, 0));
    expect(naiveProblems(naive)).toEqual([]);
  });

  it('vera replay of every fresh record agrees with its live run: 0 verdicts and 0 utility results changed', () => {
    const changed = [...naive, ...guarded].filter((r) => r.replayMismatch).map((r) => `${r.caseId} [${r.threatModel}]: ${r.replayMismatch}`);
    expect(changed).toEqual([]);
  });

  it('guarded resists the injection-only threat model more than naive, but not every method, so the ASR tells methods apart', () => {
    const indirect = (runs: LibraryRun[]) =>
      asrBy(
        runs.filter((r) => r.threatModel === 'indirect'),
        () => 'all',
      ).get('all')!;
    const rate = (r: { violated: number; runs: number }) => r.violated / r.runs;
    expect(rate(indirect(guarded))).toBeLessThan(rate(indirect(naive)));
    const byMethod = [...asrBy(guarded, (r) => r.attack).values()].map((r) => r.violated / r.runs);
    expect(Math.max(...byMethod) - Math.min(...byMethod)).toBeGreaterThan(0);
    expect(guarded.filter((r) => r.error)).toEqual([]);
  });
});
