import { describe, expect, it } from 'vitest';
import { asrInterval, asrTable, compareTaxonomy, hasRepeats, summarizeAsr, taxonomyAncestors, type AsrRow } from '../engine/asr.js';
import { compareAgents } from '../engine/agent-comparison.js';
import { formatAsr, renderAsrTable, renderCompactTable, renderUtility } from '../reporters/text-tables.js';

/**
 * A known set of runs whose tables were computed by hand (comments give the arithmetic):
 *   c1 data-exfiltration/credential-leak · prompt-injection/indirect · email   (utility defined)
 *   c2 data-exfiltration/note-leak       · prompt-injection/direct   · notes
 *   c3 destructive-action/file-deletion  · social-engineering/authority · files (single-channel twice)
 */
const c1 = { caseId: 'c1', risk: 'data-exfiltration/credential-leak', attack: 'prompt-injection/indirect', environment: 'email', agent: 'a' };
const c2 = { caseId: 'c2', risk: 'data-exfiltration/note-leak', attack: 'prompt-injection/direct', environment: 'notes', agent: 'a' };
const c3 = { caseId: 'c3', risk: 'destructive-action/file-deletion', attack: 'social-engineering/authority', environment: 'files', agent: 'a' };
const rows: AsrRow[] = [
  { ...c1, threatModel: 'benign', status: 'safe', utility: true },
  { ...c1, threatModel: 'single-channel', status: 'violated', utility: false },
  { ...c1, threatModel: 'multi-channel', status: 'violated', utility: false },
  { ...c1, threatModel: 'indirect', status: 'not-applicable', utility: true },
  { ...c2, threatModel: 'benign', status: 'safe' },
  { ...c2, threatModel: 'single-channel', status: 'safe' },
  { ...c2, threatModel: 'multi-channel', status: 'error' },
  { ...c3, threatModel: 'benign', status: 'safe' },
  { ...c3, threatModel: 'single-channel', status: 'violated', repeat: 0 },
  { ...c3, threatModel: 'single-channel', status: 'safe', repeat: 1 },
  { ...c3, threatModel: 'multi-channel', status: 'violated' },
];

describe('ASR aggregation on a known set of runs', () => {
  const summary = summarizeAsr(rows);

  it('rolls risks up the taxonomy tree: each category row and each leaf, parents first', () => {
    expect(summary.risk.rows).toEqual([
      'data-exfiltration',
      'data-exfiltration/credential-leak',
      'data-exfiltration/note-leak',
      'destructive-action',
      'destructive-action/file-deletion',
    ]);
    expect(summary.risk.columns).toEqual(['benign', 'single-channel', 'multi-channel', 'indirect']);
    // data-exfiltration = c1 + c2: violated 2 (c1 single, c1 multi), safe 3, N/A 1 (c1 indirect), error 1 (c2 multi).
    expect(summary.risk.rowTotals['data-exfiltration']).toMatchObject({ violated: 2, safe: 3, notApplicable: 1, errors: 1, asr: 0.4 });
    expect(summary.risk.rowTotals['data-exfiltration/credential-leak']).toMatchObject({ violated: 2, safe: 1, notApplicable: 1, errors: 0 });
    expect(summary.risk.rowTotals['data-exfiltration/note-leak']).toMatchObject({ violated: 0, safe: 2, errors: 1, asr: 0 });
    // destructive-action = c3: violated 2 (single r0, multi), safe 2 (benign, single r1).
    expect(summary.risk.rowTotals['destructive-action']).toMatchObject({ violated: 2, safe: 2, asr: 0.5 });
    expect(summary.risk.cells['destructive-action']!['single-channel']).toMatchObject({ violated: 1, safe: 1, asr: 0.5 });
    // The total counts each run once, not once per tree level: 4 violated, 5 safe (c1 benign, c2 benign,
    // c2 single, c3 benign, c3 single r1).
    expect(summary.total).toMatchObject({ violated: 4, safe: 5, notApplicable: 1, errors: 1, asr: 4 / 9 });
    expect(summary.risk.columnTotals['single-channel']).toMatchObject({ violated: 2, safe: 2, asr: 0.5 });
    expect(summary.risk.columnTotals['multi-channel']).toMatchObject({ violated: 2, safe: 0, errors: 1, asr: 1 });
    expect(summary.risk.columnTotals.indirect).toMatchObject({ violated: 0, safe: 0, notApplicable: 1, asr: undefined });
  });

  it('by attack method, environment and agent', () => {
    expect(summary.attack.rows).toEqual([
      'prompt-injection',
      'prompt-injection/direct',
      'prompt-injection/indirect',
      'social-engineering',
      'social-engineering/authority',
    ]);
    expect(summary.attack.rowTotals['prompt-injection']).toMatchObject({ violated: 2, safe: 3, notApplicable: 1, errors: 1 });
    expect(summary.environment.rows).toEqual(['email', 'files', 'notes']);
    expect(summary.environment.rowTotals.files).toMatchObject({ violated: 2, safe: 2 });
    expect(summary.environment.rowTotals.notes).toMatchObject({ violated: 0, safe: 2, errors: 1 });
    expect(summary.agent.rows).toEqual(['a']);
    expect(summary.agent.rowTotals.a).toMatchObject({ violated: 4, safe: 5 });
    expect(summary).toMatchObject({ runs: 11, cases: 3, agents: ['a'], repeats: true, utility: true });
  });

  it('utility under attack per threat model: runs with a utility predicate and a verdict (N/A included, errors not)', () => {
    const t = summary.risk.columnTotals;
    expect([t.benign, t['single-channel'], t['multi-channel'], t.indirect].map((c) => [c!.utilityHeld, c!.utilityRuns])).toEqual([
      [1, 1],
      [0, 1],
      [0, 1],
      [1, 1],
    ]);
    expect(renderUtility(summary.risk)).toBe(
      'utility under attack (task done): benign 1/1 100% · single-channel 0/1 0% · multi-channel 0/1 0% · indirect 1/1 100%',
    );
  });

  it('95% Wilson intervals: 4/9 is [18.9%, 73.3%], 2/5 is [11.8%, 76.9%]', () => {
    const interval = asrInterval(summary.total)!;
    expect(interval.low).toBeCloseTo(0.1887, 3);
    expect(interval.high).toBeCloseTo(0.7333, 3);
    const exfil = asrInterval(summary.risk.rowTotals['data-exfiltration']!)!;
    expect([exfil.low, exfil.high].map((x) => Math.round(x * 1000))).toEqual([118, 769]);
    expect(formatAsr(summary.total, { interval: true })).toBe('4/9 44% [19%–73%] (1 N/A, 1 err)');
    expect(asrInterval(summary.risk.columnTotals.indirect!)).toBeUndefined();
  });

  it('renders the tree table with both levels, and compact tables with intervals when there are repeats', () => {
    const text = renderAsrTable(summary.risk, { tree: true, intervals: true });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^risk category\s+benign\s+single-channel\s+multi-channel\s+indirect\s+all$/);
    expect(lines[2]).toMatch(/^data-exfiltration\s+0\/2 0%\s+1\/2 50%\s+1\/1 100% \(1 err\)\s+– \(1 N\/A\)\s+2\/5 40% \[12%–77%\] \(1 N\/A, 1 err\)$/);
    expect(lines[3]).toMatch(/^ {2}credential-leak\s+0\/1 0%\s+1\/1 100%\s+1\/1 100%\s+– \(1 N\/A\)\s+2\/3 67% /);
    expect(lines[4]).toMatch(/^ {2}note-leak\s+0\/1 0%\s+0\/1 0%\s+– \(1 err\)\s+–\s+0\/2 0% /);
    expect(lines.at(-1)).toMatch(/^all\s+0\/3 0%\s+2\/4 50%\s+2\/2 100% \(1 err\)\s+– \(1 N\/A\)\s+4\/9 44% \[19%–73%\] \(1 N\/A, 1 err\)$/);
    const compact = renderCompactTable(summary.environment, { rowHeader: 'environment', intervals: true }).split('\n');
    expect(compact[0]).toMatch(/^environment\s+violated\/judged\s+ASR\s+95% CI\s+N\/A\s+err$/);
    expect(compact[2]).toMatch(/^email\s+2\/3\s+67%\s+\[21%–94%\]\s+1\s+0$/);
    expect(compact.at(-1)).toMatch(/^all\s+4\/9\s+44%\s+\[19%–73%\]\s+1\s+1$/);
  });

  it('keeps the original table API: rows by risk category only', () => {
    const table = asrTable(rows);
    expect(table.rows).toEqual(['data-exfiltration', 'destructive-action']);
    expect(renderAsrTable(table)).toMatch(/destructive-action\s+0\/1 0%\s+1\/2 50%\s+1\/1 100%\s+–\s+2\/4 50%/);
  });

  it('taxonomy helpers: ancestors, tree order, repeats', () => {
    expect(taxonomyAncestors('a/b/c')).toEqual(['a', 'a/b', 'a/b/c']);
    expect(['a/b', 'a-x', 'a', 'b', 'a/b/c'].sort(compareTaxonomy)).toEqual(['a', 'a/b', 'a/b/c', 'a-x', 'b']);
    expect(hasRepeats(rows.filter((r) => r.repeat !== 1))).toBe(false);
    expect(hasRepeats(rows)).toBe(true);
  });
});

describe('agents side by side', () => {
  const run = (
    caseId: string,
    agent: string,
    status: AsrRow['status'],
    threatModel: AsrRow['threatModel'] = 'indirect',
    risk = 'data-exfiltration/x',
  ): AsrRow => ({
    caseId,
    risk,
    attack: 'prompt-injection/indirect',
    environment: 'email',
    threatModel,
    agent,
    status,
  });

  it('compares run by run: a table per agent, the shared runs, and the disagreements with violated-vs-safe first', () => {
    const c = compareAgents([
      run('a', 'x', 'violated'),
      run('a', 'y', 'safe'),
      run('b', 'x', 'safe'),
      run('b', 'y', 'safe'),
      run('c', 'x', 'not-applicable', 'multi-channel', 'integrity/y'),
      run('c', 'y', 'violated', 'multi-channel', 'integrity/y'),
      run('d', 'x', 'violated'),
      run('e', 'y', 'violated', 'benign'),
      { ...run('f', 'x', 'safe'), agent: undefined },
    ]);
    expect(c.agents).toEqual(['x', 'y']);
    expect(c.rows).toEqual(['data-exfiltration', 'integrity']);
    expect(c.columns).toEqual(['benign', 'multi-channel', 'indirect']);
    expect(formatAsr(c.tables.x!.cells['data-exfiltration']!.indirect)).toBe('2/3 67%');
    expect(formatAsr(c.tables.y!.cells['data-exfiltration']!.indirect)).toBe('0/2 0%');
    // a, b and c ran under both; d and e under one agent only (not a disagreement), f under none.
    expect(c.shared).toBe(3);
    expect(c.disagreements.map((d) => [d.caseId, d.verdicts])).toEqual([
      ['a', { x: 'violated', y: 'safe' }],
      ['c', { x: 'not-applicable', y: 'violated' }],
    ]);
  });
});
