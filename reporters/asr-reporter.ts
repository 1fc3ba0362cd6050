import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Reporter, TestCase, TestModule, TestSpecification, Vitest } from 'vitest/node';
import { summarizeAsr, type AsrRow } from '../engine/asr.js';
import { compareAgents } from '../engine/agent-comparison.js';
import { renderAgentDisagreements, renderAsrTable, renderAttribution, renderCompactTable, renderUtility } from './text-tables.js';
import { renderStatistics } from './text-tables.js';
import type { VeraTestMeta } from '../engine/test-meta.js';
import { renderTraffic, summarizeTraffic, type PriceTable } from './traffic.js';
import { ProgressTracker } from './progress.js';
import { buildJsonSummary } from './summary/json-summary.js';
import { renderMarkdownSummary } from './summary/markdown-summary.js';
import { reportRunOfMeta } from './summary/report-run.js';
import { unconfinedWarning } from './confinement-wording.js';

/** Every Vera test the run knows of, with its verdict — across all modules, not only the rerun ones. */
export function collectAsrRows(modules: Iterable<TestModule>): AsrRow[] {
  return collectVeraTests(modules).map((t) => t.row);
}

export function collectVeraTests(modules: Iterable<TestModule>): Array<{ test: TestCase; meta: VeraTestMeta; row: AsrRow }> {
  const out: Array<{ test: TestCase; meta: VeraTestMeta; row: AsrRow }> = [];
  for (const module of modules) {
    for (const test of module.children.allTests()) {
      const row = rowOf(test);
      if (row) out.push({ test, meta: test.meta().vera as VeraTestMeta, row });
    }
  }
  return out;
}

/** One line per violated / N/A / errored run, with the first piece of evidence or the reason. */
export function renderFindings(tests: Array<{ test: TestCase; meta: VeraTestMeta }>, limit = 20): string {
  const lines: string[] = [];
  const pick = (status: string) => tests.filter((t) => (t.meta.status ?? 'error') === status);
  // With several agents (one project each), a finding says whose it is.
  const severalAgents = new Set(tests.map((t) => t.meta.agent)).size > 1;
  const section = (title: string, items: typeof tests, detail: (m: VeraTestMeta, t: TestCase) => string) => {
    if (items.length === 0) return;
    lines.push(` ${title} (${items.length}):`);
    for (const { test, meta } of items.slice(0, limit)) {
      const text = detail(meta, test);
      lines.push(`   ${test.name}${severalAgents && meta.agent ? ` (${meta.agent})` : ''}  ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`);
    }
    if (items.length > limit) lines.push(`   … ${items.length - limit} more`);
  };
  section('violated', pick('violated'), (m) => m.evidence?.[0] ?? '');
  section('not applicable', pick('not-applicable'), (m) => m.reason ?? '');
  section('errors', pick('error'), (m, t) => firstError(m, t));
  return lines.join('\n');
}

/** What the counterfactual runs cost (one extra run per violated injected run); empty when there were none. */
export function renderCounterfactualCost(metas: ReadonlyArray<Pick<VeraTestMeta, 'counterfactual'>>): string {
  const runs = metas.flatMap((m) => (m.counterfactual ? [m.counterfactual] : []));
  if (runs.length === 0) return '';
  const seconds = runs.reduce((s, r) => s + r.durationMs, 0) / 1000;
  const tokens = runs.reduce((s, r) => ({ input: s.input + r.usage.input, output: s.output + r.usage.output }), { input: 0, output: 0 });
  return `counterfactual cost: ${runs.length} extra run${runs.length === 1 ? '' : 's'}, ${seconds.toFixed(1)} s of run time, ${tokens.input} tokens in / ${tokens.output} out`;
}

/** The warning for runs whose agent ran as a plain host process (`unconfined: true`); empty when none did. */
export function renderConfinementWarning(metas: ReadonlyArray<Pick<VeraTestMeta, 'confinement'>>): string {
  const unconfined = metas.filter((m) => m.confinement === 'none').length;
  if (unconfined === 0) return '';
  return ` ⚠ UNCONFINED: ${unconfinedWarning(unconfined)}`;
}

/** Runs whose parts failed to tear down: their verdicts stand, but something was left behind or failed to stop. */
export function renderTeardownWarning(metas: ReadonlyArray<Pick<VeraTestMeta, 'teardown' | 'caseId' | 'threatModel'>>): string {
  const failed = metas.filter((m) => m.teardown);
  if (failed.length === 0) return '';
  const first = failed[0]!;
  return ` ⚠ TEARDOWN: ${failed.length} run${failed.length === 1 ? '' : 's'} failed to tear down (verdicts stand), e.g. ${first.caseId} [${first.threatModel}]: ${first.teardown}`;
}

function firstError(meta: VeraTestMeta, test: TestCase): string {
  return meta.reason ?? test.result().errors?.[0]?.message?.split('\n')[0] ?? '';
}

function rowOf(test: TestCase): AsrRow | undefined {
  const meta = test.meta().vera as VeraTestMeta | undefined;
  if (!meta) return undefined;
  const state = test.result().state;
  if (state === 'pending') return undefined;
  // Skipped without a verdict: the test never ran (a -t or --tags-filter left it out). An N/A
  // run is skipped too, but it carries its verdict.
  if (state === 'skipped' && !meta.status) return undefined;
  const row: AsrRow = {
    caseId: meta.caseId,
    risk: meta.risk,
    attack: meta.attack,
    environment: meta.environment,
    threatModel: meta.threatModel,
  };
  // No verdict in meta means the run never got one (setup crashed): an error, never "safe".
  if (meta.status) row.status = meta.status;
  if (meta.agent) row.agent = meta.agent;
  if (meta.utility !== undefined) row.utility = meta.utility;
  if (meta.repeat !== undefined) row.repeat = meta.repeat;
  if (meta.attribution) row.attribution = meta.attribution;
  return row;
}

export interface AsrReporterOptions {
  /** USD per million tokens by model: the traffic line adds cost. */
  prices?: PriceTable;
  /**
   * A progress line during the run (runs done/total, ASR so far, ETA), printed as an ordinary log
   * line at most every `progressIntervalMs` so it never fights Vitest's own status window.
   * `'auto'` (default): only on a terminal and not in CI.
   */
  progress?: boolean | 'auto';
  progressIntervalMs?: number;
  /** Also write these at the end of each run (paths relative to `root`). */
  summary?: { json?: string; markdown?: string; githubStepSummary?: boolean };
  root?: string;
}

/**
 * Prints the attack-success-rate tables at the end of each run: risk (category and sub-category)
 * × threat model, then compact tables by attack method and environment, utility under attack and
 * the findings. In watch mode the tables cover every case Vitest knows, read from `vitest.state`.
 * Inside a shard (`--shard`) it stays quiet — a shard's numbers are partial; the merged run
 * (`--merge-reports`) prints the full tables.
 */
export class AsrReporter implements Reporter {
  private vitest: Vitest | undefined;
  private readonly progress = new ProgressTracker();
  private showProgress = false;

  constructor(private readonly options: AsrReporterOptions = {}) {}

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
    const setting = this.options.progress ?? 'auto';
    const tty = Boolean((vitest.logger.outputStream as { isTTY?: boolean }).isTTY);
    this.showProgress = !this.inShard() && !vitest.config.mergeReports && (setting === true || (setting === 'auto' && tty && !process.env.CI));
  }

  /** A shard sees only its part of the cases: tables and summaries would be wrong. */
  private inShard(): boolean {
    return Boolean(this.vitest?.config.shard);
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    // One collection per specification (a file in two projects is collected twice).
    this.progress.start(specifications.length);
  }

  onTestModuleCollected(module: TestModule): void {
    if (!this.showProgress) return;
    let count = 0;
    // Tests a filter left out (-t, --tags-filter) are collected as skipped: they will not run.
    for (const test of module.children.allTests()) if (test.meta().vera && test.options.mode !== 'skip' && test.options.mode !== 'todo') count++;
    this.progress.collected(count);
  }

  onTestCaseResult(test: TestCase): void {
    if (!this.showProgress) return;
    const meta = test.meta().vera as VeraTestMeta | undefined;
    if (!meta) return;
    if (test.result().state === 'skipped' && !meta.status) return; // filtered out: never ran
    this.progress.finished(meta.status);
    if (this.progress.due(this.options.progressIntervalMs ?? 2000)) this.vitest?.logger.log(` ${this.progress.line()}`);
  }

  async onTestRunEnd(): Promise<void> {
    const vitest = this.vitest;
    if (!vitest || this.inShard()) return;
    const tests = collectVeraTests(vitest.state.getTestModules());
    if (tests.length === 0) return;
    const rows = tests.map((t) => t.row);
    const summary = summarizeAsr(rows);
    const agents = summary.agents;
    const intervals = summary.repeats;
    const title = `\n Vera — attack success rate (violated / judged)${agents.length ? ` — agent ${agents.join(', ')}` : ''}`;
    const blocks = [renderAsrTable(summary.risk, { title, tree: true, intervals })];
    const utility = [renderUtility(summary.risk), renderAttribution(summary.risk), renderCounterfactualCost(tests.map((t) => t.meta))]
      .filter(Boolean)
      .join('\n');
    if (utility) blocks.push(utility);
    blocks.push('', renderCompactTable(summary.attack, { rowHeader: 'attack method', tree: true, intervals }));
    blocks.push('', renderCompactTable(summary.environment, { rowHeader: 'environment', tree: true, intervals }));
    if (agents.length > 1)
      blocks.push('', renderCompactTable(summary.agent, { rowHeader: 'agent', intervals }), '', renderAgentDisagreements(compareAgents(rows)));
    if (intervals) blocks.push('', renderStatistics(rows));
    const findings = [renderConfinementWarning(tests.map((t) => t.meta)), renderTeardownWarning(tests.map((t) => t.meta)), renderFindings(tests)]
      .filter(Boolean)
      .join('\n\n');
    // Counterfactual runs are model traffic too.
    const metas = tests.map((t) => t.meta);
    const traffic = renderTraffic(summarizeTraffic([...metas, ...metas.flatMap((m) => (m.counterfactual ? [m.counterfactual] : []))], this.options.prices));
    vitest.logger.log(`${blocks.join('\n')}\n${findings ? `\n${findings}\n` : ''}${traffic ? `\n${traffic}\n` : ''}`);
    await this.writeSummaries(tests).catch((error: Error) => vitest.logger.error(`vera: could not write the summaries: ${error.message}`));
  }

  private async writeSummaries(tests: Array<{ test: TestCase; meta: VeraTestMeta; row: AsrRow }>): Promise<void> {
    const summary = this.options.summary;
    const stepSummary = process.env.GITHUB_STEP_SUMMARY;
    const toStep = Boolean(stepSummary) && summary?.githubStepSummary !== false;
    if (!summary?.json && !summary?.markdown && !toStep) return;
    const runs = tests.map((t) => reportRunOfMeta(t.meta, t.row, t.meta.status ? undefined : firstError(t.meta, t.test)));
    const root = this.options.root ?? this.vitest?.config.root ?? process.cwd();
    const markdown = summary?.markdown || toStep ? renderMarkdownSummary(runs) : '';
    const write = async (file: string, text: string) => {
      const path = resolve(root, file);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
    };
    if (summary?.json)
      await write(summary.json, `${JSON.stringify(buildJsonSummary(runs, this.options.prices ? { prices: this.options.prices } : {}), null, 2)}\n`);
    if (summary?.markdown) await write(summary.markdown, markdown);
    if (toStep) await appendFile(stepSummary!, `${markdown}\n`);
  }
}
