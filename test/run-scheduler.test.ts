import type { Test } from '@vitest/runner';
import { describe, expect, it } from 'vitest';
import type { RunCaseResult } from '../runner/run-case.js';
import { RunScheduler, type StartRun } from '../plugin/run-scheduler.js';

/** A controllable run: it resolves when the test says so, and counts what is in flight. */
function harness() {
  let inFlight = 0;
  let maxInFlight = 0;
  const started: string[] = [];
  const release = new Map<string, () => void>();
  const aborted: string[] = [];
  const start =
    (key: string): StartRun =>
    (signal) => {
      started.push(key);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      signal.addEventListener('abort', () => aborted.push(key));
      return new Promise<RunCaseResult>((resolve) => {
        release.set(key, () => {
          inFlight--;
          resolve({ record: { caseId: key } as never });
        });
      });
    };
  const finish = async (key: string) => {
    release.get(key)!();
    await new Promise((r) => setImmediate(r));
  };
  return { start, started, finish, aborted, stats: () => ({ inFlight, maxInFlight }) };
}

const task = (name: string, mode: Test['mode'] = 'run') => ({ name, mode }) as Test;
const signal = () => new AbortController().signal;

describe('RunScheduler', () => {
  it('starts planned runs ahead of their tests, in plan order, at most `limit` at a time', async () => {
    const h = harness();
    const s = new RunScheduler(2);
    s.usePlan(
      1,
      ['a', 'b', 'c', 'd'].map((key) => ({ key, start: h.start(key) })),
    );
    // Nothing was collected yet, and two runs are already in flight.
    expect(h.started).toEqual(['a', 'b']);
    await h.finish('a');
    expect(h.started).toEqual(['a', 'b', 'c']);
    expect(h.stats().maxInFlight).toBe(2);
  });

  it('a test takes its own planned run; the record comes back once it finished', async () => {
    const h = harness();
    const s = new RunScheduler(4);
    s.usePlan(1, [{ key: 'a', start: h.start('a') }]);
    const t = task('a');
    s.register(t, 'a', h.start('a-unplanned'));
    const taken = s.take(t, signal());
    await h.finish('a');
    await expect(taken).resolves.toMatchObject({ record: { caseId: 'a' } });
    // The planned run was used, not a second one.
    expect(h.started).toEqual(['a']);
  });

  it('without a plan, a run starts when its test takes it, even past the limit', async () => {
    const h = harness();
    const s = new RunScheduler(1);
    const [t1, t2] = [task('x'), task('y')];
    s.register(t1, 'x', h.start('x'));
    s.register(t2, 'y', h.start('y'));
    void s.take(t1, signal());
    void s.take(t2, signal());
    expect(h.started).toEqual(['x', 'y']);
  });

  it('collected tests that will not run are never started', async () => {
    const h = harness();
    const s = new RunScheduler(4);
    const kept = task('kept');
    s.register(task('skipped', 'skip'), 'skipped', h.start('skipped'));
    s.register(kept, 'kept', h.start('kept'));
    const taken = s.take(kept, signal());
    await h.finish('kept');
    await taken;
    expect(h.started).toEqual(['kept']);
  });

  it('keeps at most `lookahead` finished-but-untaken runs', async () => {
    const h = harness();
    const s = new RunScheduler(10, 2);
    s.usePlan(
      1,
      ['a', 'b', 'c', 'd'].map((key) => ({ key, start: h.start(key) })),
    );
    expect(h.started).toEqual(['a', 'b']);
    await h.finish('a');
    await h.finish('b');
    // Both finished, neither taken: the scheduler waits for a test before running further ahead.
    expect(h.started).toEqual(['a', 'b']);
    const t = task('a');
    s.register(t, 'a', h.start('never'));
    await s.take(t, signal());
    await new Promise((r) => setImmediate(r));
    expect(h.started).toEqual(['a', 'b', 'c']);
  });

  it("a test's abort aborts its run; a new plan aborts runs nobody took", async () => {
    const h = harness();
    const s = new RunScheduler(4);
    s.usePlan(
      1,
      ['a', 'b'].map((key) => ({ key, start: h.start(key) })),
    );
    const t = task('a');
    s.register(t, 'a', h.start('a'));
    const controller = new AbortController();
    void s.take(t, controller.signal);
    controller.abort(new Error('test timed out'));
    expect(h.aborted).toEqual(['a']);
    s.usePlan(2, []);
    expect(h.aborted).toEqual(['a', 'b']);
  });
});
