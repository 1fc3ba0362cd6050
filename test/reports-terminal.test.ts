import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProgressTracker } from '../reporters/progress.js';
import { REPO, collect } from './helpers/run-vitest.js';

describe('progress line', () => {
  it('done/total, ASR so far and an ETA from the pace so far; printed at most once per interval', () => {
    let now = 0;
    const p = new ProgressTracker(() => now);
    p.start();
    p.collected(6);
    p.collected(4);
    expect(p.line()).toBe('Vera 0/10 runs (0%) · ASR so far –');
    now = 1000;
    p.finished('violated');
    expect(p.due(2000)).toBe(true);
    now = 2000;
    p.finished('safe');
    expect(p.due(2000)).toBe(false);
    now = 2500;
    p.finished('not-applicable');
    p.finished(undefined);
    // 4 runs in 2.5 s: 6 left at 0.625 s each.
    expect(p.line()).toBe('Vera 4/10 runs (40%) · ASR so far 1/2 50% · 1 N/A · 1 err · ETA 4s');
    expect(p.due(2000)).toBe(false);
    now = 3000;
    expect(p.due(2000)).toBe(true);
    for (let i = 0; i < 6; i++) p.finished('safe');
    // The last run prints nothing: the tables follow.
    now = 9000;
    expect(p.due(2000)).toBe(false);
    expect(p.line()).toBe('Vera 10/10 runs (100%) · ASR so far 1/8 13% · 1 N/A · 1 err');
  });
});

describe('progress while files are still being collected', () => {
  it('no percentage or ETA until every file is collected (the total still grows), so the figure never goes backwards', () => {
    let now = 0;
    const p = new ProgressTracker(() => now);
    p.start(3);
    p.collected(10);
    now = 1000;
    for (let i = 0; i < 6; i++) p.finished('safe');
    expect(p.line()).toBe('Vera 6 runs done, 10 known so far (2 of 3 files still to collect) · ASR so far 0/6 0%');
    p.collected(20);
    p.collected(0);
    // Every file collected: 6 of 30, not the 60% the first file alone suggested.
    expect(p.line()).toBe('Vera 6/30 runs (20%) · ASR so far 0/6 0% · ETA 4s');
  });
});

describe('end of a real run', () => {
  it('prints progress lines before the tables when asked, and appends the Markdown summary to GITHUB_STEP_SUMMARY', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-terminal-'));
    const stepSummary = join(dir, 'step-summary.md');
    await writeFile(stepSummary, '# earlier step\n');
    try {
      const child = spawn(process.execPath, [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run'], {
        cwd: join(REPO, 'test/fixtures/shard-project'),
        env: { ...process.env, FIXTURE_PROGRESS: '1', FIXTURE_RECORDS: join(dir, 'records'), GITHUB_STEP_SUMMARY: stepSummary, NO_COLOR: '1', CI: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const { stdout } = await collect(child);
      // While files are still being collected a line gives the runs known so far; after, done/total and the percentage.
      const progress = stdout.split('\n').filter((l) => /^ Vera \d+(\/\d+ runs| runs done)/.test(l));
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toMatch(
        /^ Vera (\d+\/\d+ runs \(\d+%\)|\d+ runs done, \d+ known so far \(\d+ of \d+ files still to collect\)) · ASR so far (–|\d+\/\d+ \d+%)/,
      );
      expect(stdout.indexOf(progress.at(-1)!)).toBeLessThan(stdout.indexOf('Vera — attack success rate'));
      const step = await readFile(stepSummary, 'utf8');
      expect(step.startsWith('# earlier step\n## Vera — attack success rate\n')).toBe(true);
      expect(step).toContain('**6/10 judged runs violated (60%)** · 4 cases · 11 runs · 1 N/A · 0 errors');
      expect(step).toContain('| **integrity** | 0/1 0% | – | – | – (1 N/A) | 0/1 0% (1 N/A) |');
      expect(step).toContain('Utility under attack (the honest task still got done): benign 1/1 (100%)');
      expect(step).toMatch(/### Not applicable \(1\)\n\n- `unread-injection` \[indirect\]/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
