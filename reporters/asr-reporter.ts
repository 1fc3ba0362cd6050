import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';
import { asrTable, renderAsrTable, type AsrRow } from '../engine/asr.js';
import type { VeraTestMeta } from '../plugin/test-meta.js';

/** Every Vera test the run knows of, with its verdict — across all modules, not only the rerun ones. */
export function collectAsrRows(modules: Iterable<TestModule>): AsrRow[] {
  const rows: AsrRow[] = [];
  for (const module of modules) {
    for (const test of module.children.allTests()) {
      const row = rowOf(test);
      if (row) rows.push(row);
    }
  }
  return rows;
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
    const rows = collectAsrRows(vitest.state.getTestModules());
    if (rows.length === 0) return;
    const agents = [...new Set(rows.map((r) => r.agent).filter(Boolean))];
    const title = `\n Vera — attack success rate (violated / judged)${agents.length ? ` — agent ${agents.join(', ')}` : ''}`;
    vitest.logger.log(`${renderAsrTable(asrTable(rows), { title })}\n`);
  }
}
