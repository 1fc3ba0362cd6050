import type { AgentComparison } from '../engine/agent-comparison.js';
import { asrInterval, attributableAsr, utilityRate, type AsrCell, type AsrTable } from '../engine/asr.js';
import { statisticsByThreatModel, type AttemptRow, type Interval, type Rate } from '../engine/stats.js';

/**
 * The ASR tables and statistics as plain text (no colours: they also go to logs and CI) — the
 * terminal reporter's, `vera report`'s and the Markdown summary's. Presentation, so it lives with
 * the reporters; the numbers it shows are computed in engine/asr.ts and engine/stats.ts.
 */

/** One line: the attributable ASR of each threat model that had counterfactuals, beside the raw one. */
export function renderAttribution(table: AsrTable): string {
  const parts = table.columns
    .map((c) => [c, table.columnTotals[c]!] as const)
    .filter(([, cell]) => cell.attributionRuns > 0)
    .map(([c, cell]) => {
      const judged = cell.violated + cell.safe;
      return `${c} ${cell.attributable}/${judged} ${percent(attributableAsr(cell)!)} (raw ${cell.violated}/${judged} ${percent(cell.asr ?? 0)}; ${cell.attributionRuns - cell.attributable} violation${cell.attributionRuns - cell.attributable === 1 ? '' : 's'} also without the injected text)`;
    });
  return parts.length ? `attributable ASR (the counterfactual without the injected text was safe): ${parts.join(' · ')}` : '';
}

export const percent = (x: number): string => `${Math.round(x * 100)}%`;

export function formatInterval(interval: Interval | undefined): string {
  return interval ? `[${percent(interval.low)}–${percent(interval.high)}]` : '–';
}

export function formatAsr(cell: AsrCell | undefined, options: { interval?: boolean } = {}): string {
  if (!cell) return '–';
  const judged = cell.violated + cell.safe;
  let text = judged > 0 ? `${cell.violated}/${judged} ${percent(cell.asr ?? 0)}` : '–';
  if (options.interval && judged > 0) text += ` ${formatInterval(asrInterval(cell))}`;
  const extra: string[] = [];
  if (cell.notApplicable) extra.push(`${cell.notApplicable} N/A`);
  if (cell.errors) extra.push(`${cell.errors} err`);
  if (extra.length) text += ` (${extra.join(', ')})`;
  return text;
}

/** A taxonomy row's label in a text table: top level in full, children indented by their last segment. */
export function treeLabel(key: string): string {
  const parts = key.split('/');
  return parts.length === 1 ? key : `${'  '.repeat(parts.length - 1)}${parts.at(-1)!}`;
}

function layout(all: string[][]): string[] {
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  const [header, ...rest] = all;
  const footer = rest.pop()!;
  return [line(header!), rule, ...rest.map(line), rule, line(footer)];
}

/** A plain-text table (no colours: it also goes to logs and CI). */
export function renderAsrTable(table: AsrTable, options: { title?: string; rowHeader?: string; tree?: boolean; intervals?: boolean } = {}): string {
  const label = options.tree ? treeLabel : (k: string) => k;
  const header = [options.rowHeader ?? 'risk category', ...table.columns, 'all'];
  const body = table.rows.map((row) => [
    label(row),
    ...table.columns.map((c) => formatAsr(table.cells[row]?.[c])),
    formatAsr(table.rowTotals[row], { interval: options.intervals }),
  ]);
  const footer = ['all', ...table.columns.map((c) => formatAsr(table.columnTotals[c])), formatAsr(table.total, { interval: options.intervals })];
  const out = layout([header, ...body, footer]);
  if (options.title) out.unshift(options.title);
  return out.join('\n');
}

/** One line per row over all threat models: judged, ASR, (interval), N/A, errors. */
export function renderCompactTable(table: AsrTable, options: { title?: string; rowHeader: string; tree?: boolean; intervals?: boolean }): string {
  const label = options.tree ? treeLabel : (k: string) => k;
  const header = [options.rowHeader, 'violated/judged', 'ASR', ...(options.intervals ? ['95% CI'] : []), 'N/A', 'err'];
  const cells = (cell: AsrCell) => {
    const judged = cell.violated + cell.safe;
    return [
      `${cell.violated}/${judged}`,
      judged > 0 ? percent(cell.asr ?? 0) : '–',
      ...(options.intervals ? [formatInterval(asrInterval(cell))] : []),
      String(cell.notApplicable),
      String(cell.errors),
    ];
  };
  const out = layout([header, ...table.rows.map((row) => [label(row), ...cells(table.rowTotals[row]!)]), ['all', ...cells(table.total)]]);
  if (options.title) out.unshift(options.title);
  return out.join('\n');
}

/** `utility under attack: benign 3/4 75% · indirect 1/4 25%` (only threat models whose cases define utility). */
export function renderUtility(table: AsrTable): string {
  const parts = table.columns
    .map((c) => [c, table.columnTotals[c]!] as const)
    .filter(([, cell]) => cell.utilityRuns > 0)
    .map(([c, cell]) => `${c} ${cell.utilityHeld}/${cell.utilityRuns} ${percent(utilityRate(cell)!)}`);
  return parts.length ? `utility under attack (task done): ${parts.join(' · ')}` : '';
}

/** `5/13 38% [18–61%]`, or `–` when nothing was judged. */
export function formatRate(r: Rate): string {
  if (r.n === 0) return '–';
  return `${r.successes}/${r.n} ${percent(r.rate ?? 0)} [${percent(r.interval.low)}–${percent(r.interval.high)}]`;
}

/**
 * A plain-text block under the ASR table: per threat model, ASR per run with its 95% Wilson
 * interval, attack success within k attempts (per case), and utility under attack.
 */
export function renderStatistics(rows: readonly AttemptRow[], z = 1.96): string {
  const stats = statisticsByThreatModel(rows, z);
  if (stats.length === 0) return '';
  const confidence = z === 1.96 ? '95%' : `z=${z}`;
  const header = ['threat model', `ASR per run [${confidence} Wilson]`, 'success within k (cases)', 'utility under attack', 'excluded'];
  const body = stats.map((s) => {
    const excluded: string[] = [];
    if (s.asr.notApplicable) excluded.push(`${s.asr.notApplicable} N/A`);
    if (s.asr.errors) excluded.push(`${s.asr.errors} err`);
    const k = s.withinK.k === s.withinK.minK ? `k=${s.withinK.k}` : `k=${s.withinK.minK}..${s.withinK.k}`;
    return [s.threatModel, formatRate(s.asr), s.withinK.n > 0 ? `${formatRate(s.withinK)} ${k}` : '–', formatRate(s.utility), excluded.join(', ') || '–'];
  });
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** The runs two agents judged differently, for the terminal: the first `max`, and how to list the rest. */
export function renderAgentDisagreements(comparison: AgentComparison, max = 10): string {
  if (comparison.agents.length < 2) return '';
  const n = comparison.disagreements.length;
  const head = ` agents judged ${n} of ${comparison.shared} shared runs differently${n ? ':' : ''}`;
  const lines = comparison.disagreements.slice(0, max).map(
    (d) =>
      `   ${d.caseId} [${d.threatModel}]${d.repeat ? ` #${d.repeat + 1}` : ''}  ${comparison.agents
        .filter((a) => a in d.verdicts)
        .map((a) => `${a}: ${d.verdicts[a] ?? 'error'}`)
        .join(' · ')}`,
  );
  if (n > max) lines.push(`   … ${n - max} more (vera report: "Agents compared"; vera diff <records> --agents A,B)`);
  return [head, ...lines].join('\n');
}
