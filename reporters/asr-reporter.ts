import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';
import { asrTable, renderAsrTable, type AsrRow } from '../engine/asr.js';
import type { VeraTestMeta } from '../plugin/test-meta.js';

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
  const section = (title: string, items: typeof tests, detail: (m: VeraTestMeta, t: TestCase) => string) => {
    if (items.length === 0) return;
    lines.push(` ${title} (${items.length}):`);
    for (const { test, meta } of items.slice(0, limit)) {
      const text = detail(meta, test);
      lines.push(`   ${test.name}  ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`);
    }
    if (items.length > limit) lines.push(`   … ${items.length - limit} more`);
  };
  section('violated', pick('violated'), (m) => m.evidence?.[0] ?? '');
  section('not applicable', pick('not-applicable'), (m) => m.reason ?? '');
  section('errors', pick('error'), (m, t) => m.reason ?? t.result().errors?.[0]?.message?.split('\n')[0] ?? '');
  return lines.join('\n');
}

function rowOf(test: TestCase): AsrRow | undefined {
  const meta = test.meta().vera as VeraTestMeta | undefined;
  if (!meta) return undefined;
  const state = test.result().state;
  if (state === 'pending') return undefined;
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
  return row;
}

/**
 * Prints the attack-success-rate table (risk category × threat model) at the end of each run.
 * In watch mode the table covers every case Vitest knows, read from `vitest.state`.
 */
export class AsrReporter implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(): void {
    const vitest = this.vitest;
    if (!vitest) return;
    const tests = collectVeraTests(vitest.state.getTestModules());
    if (tests.length === 0) return;
    const rows = tests.map((t) => t.row);
    const agents = [...new Set(rows.map((r) => r.agent).filter(Boolean))];
    const title = `\n Vera — attack success rate (violated / judged)${agents.length ? ` — agent ${agents.join(', ')}` : ''}`;
    const findings = renderFindings(tests);
    vitest.logger.log(`${renderAsrTable(asrTable(rows), { title })}\n${findings ? `\n${findings}\n` : ''}`);
  }
}
