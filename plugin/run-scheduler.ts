import type { Test } from '@vitest/runner';
import type { RunCaseResult } from '../runner/run-case.js';

/** Starts one case run; the signal aborts it. */
export type StartRun = (signal: AbortSignal) => Promise<RunCaseResult>;

interface Entry {
  key: string;
  start: StartRun;
  controller: AbortController;
  /** Known once the test is collected; until then the entry comes from the run plan. */
  task?: Test;
  result?: Promise<RunCaseResult>;
  /** Taken by its test: its result is no longer held. */
  taken?: boolean;
}

/**
 * Starts case runs ahead of their tests, up to a concurrency limit. An LLM-bound run mostly
 * waits, and Vitest runs a worker's files one after another, so waiting file by file would leave
 * the provider's concurrency unused. Entries come from two places: the run plan (every planned
 * run of the test run, in Vitest's order, known before any file is collected — see
 * `RunPlanner`) and test registration (a test the plan did not foresee runs when its body asks).
 * Each test body then takes its own run. Runs are started in plan order, at most `limit` at a
 * time and at most `lookahead` finished-but-not-taken, so memory stays bounded.
 */
export class RunScheduler {
  private entries: Entry[] = [];
  private readonly byKey = new Map<string, Entry>();
  private readonly byTask = new Map<Test, Entry>();
  private generation: number | undefined;
  private active = 0;
  private waiting = 0;
  private next = 0;

  constructor(
    private readonly limit: number,
    private readonly lookahead = limit * 4,
  ) {}

  /** Adopts a new plan (once per test run); runs of an older plan that nobody took are aborted. */
  usePlan(generation: number, planned: Array<{ key: string; start: StartRun }>): void {
    if (this.generation === generation) return;
    this.reset();
    this.generation = generation;
    for (const { key, start } of planned) this.add(key, start);
    this.pump();
  }

  /** Called while a file is collected, once per test. */
  register(task: Test, key: string, start: StartRun): void {
    // A planned entry is adopted; an entry that already had a test belongs to an earlier run.
    const planned = this.byKey.get(key);
    const entry = planned && !planned.task ? planned : this.add(key, start);
    entry.task = task;
    this.byTask.set(task, entry);
  }

  /** The run of `task`, started now if it was not yet; the signal (the test's) aborts it. */
  take(task: Test, signal: AbortSignal): Promise<RunCaseResult> {
    const entry = this.byTask.get(task);
    if (!entry) return Promise.reject(new Error(`vera: no scheduled run for "${task.name}"`));
    signal.addEventListener('abort', () => entry.controller.abort(signal.reason), { once: true });
    // A test body is waiting for it: it starts now even past the limit, or it could wait on
    // runs planned after it.
    const prestarted = entry.result !== undefined;
    if (prestarted) this.waiting--;
    const result = entry.result ?? this.launch(entry);
    return result.finally(() => {
      entry.taken = true;
      entry.result = undefined;
      this.byTask.delete(task);
      if (this.byKey.get(entry.key) === entry) this.byKey.delete(entry.key);
      this.pump();
    });
  }

  private add(key: string, start: StartRun): Entry {
    const entry: Entry = { key, start, controller: new AbortController() };
    this.entries.push(entry);
    this.byKey.set(key, entry);
    return entry;
  }

  private pump(): void {
    while (this.active < this.limit && this.waiting < this.lookahead && this.next < this.entries.length) {
      const entry = this.entries[this.next++]!;
      // A collected test that will not run (filtered, skipped) gets no run.
      if (entry.result || entry.taken || (entry.task && entry.task.mode !== 'run')) continue;
      void this.launch(entry);
      this.waiting++;
    }
  }

  private launch(entry: Entry): Promise<RunCaseResult> {
    this.active++;
    entry.result = entry.start(entry.controller.signal).finally(() => {
      this.active--;
      this.pump();
    });
    // A run nobody takes (its test was filtered out or cancelled) must not become an unhandled rejection.
    entry.result.catch(() => {});
    return entry.result;
  }

  private reset(): void {
    for (const entry of this.byKey.values()) if (entry.result) entry.controller.abort(new Error('superseded by a new test run'));
    this.entries = [];
    this.byKey.clear();
    this.byTask.clear();
    this.next = 0;
    this.waiting = 0;
  }
}
