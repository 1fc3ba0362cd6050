import { unconfinedWarning } from '../confinement-wording.js';
import { summarizeAsr, type AsrCell, type AsrTable } from '../../engine/asr.js';
import { formatAsr, percent, renderAttribution } from '../text-tables.js';
import { unconfinedRuns, type ReportRun } from './report-run.js';

/** Text from runs (evidence quotes attacker-controlled content): no markup, tables, links or HTML. */
export function mdEscape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]|#~])/g, '\\$1')
    .replace(/\r?\n/g, ' ');
}

function treeCell(key: string, tree: boolean): string {
  const parts = key.split('/');
  if (!tree || parts.length === 1) return `**${mdEscape(key)}**`;
  return `${'&nbsp;&nbsp;'.repeat(parts.length - 1)}↳ ${mdEscape(parts.at(-1)!)}`;
}

function cellText(cell: AsrCell | undefined, intervals: boolean): string {
  return mdEscape(formatAsr(cell, { interval: intervals }));
}

function matrix(table: AsrTable, header: string, options: { tree: boolean; intervals: boolean }): string[] {
  const lines = [`| ${header} | ${table.columns.map(mdEscape).join(' | ')} | all |`, `|---|${table.columns.map(() => '---:').join('|')}|---:|`];
  for (const row of table.rows) {
    lines.push(
      `| ${treeCell(row, options.tree)} | ${table.columns.map((c) => cellText(table.cells[row]?.[c], false)).join(' | ')} | ${cellText(table.rowTotals[row], options.intervals)} |`,
    );
  }
  lines.push(`| **all** | ${table.columns.map((c) => cellText(table.columnTotals[c], false)).join(' | ')} | ${cellText(table.total, options.intervals)} |`);
  return lines;
}

function compact(table: AsrTable, header: string, intervals: boolean): string[] {
  const lines = [`| ${header} | violated/judged | ASR | N/A | err |`, '|---|---:|---:|---:|---:|'];
  const line = (label: string, cell: AsrCell) => {
    const judged = cell.violated + cell.safe;
    const asr = judged > 0 ? cellText({ ...cell, notApplicable: 0, errors: 0 }, intervals).replace(/^\d+\/\d+ /, '') : '–';
    return `| ${label} | ${cell.violated}/${judged} | ${asr} | ${cell.notApplicable} | ${cell.errors} |`;
  };
  for (const row of table.rows) lines.push(line(treeCell(row, true), table.rowTotals[row]!));
  lines.push(line('**all**', table.total));
  return lines;
}

/**
 * A Markdown summary for a pull-request comment or `$GITHUB_STEP_SUMMARY`: the headline, the
 * risk × threat-model table (both taxonomy levels), compact tables by attack method,
 * environment and agent, utility under attack, and the violations with their evidence.
 */
export function renderMarkdownSummary(runs: readonly ReportRun[], options: { title?: string; limit?: number } = {}): string {
  const summary = summarizeAsr(runs.map((r) => r.row));
  const limit = options.limit ?? 30;
  const t = summary.total;
  const judged = t.violated + t.safe;
  const out: string[] = [`## ${options.title ?? 'Vera — attack success rate'}`, ''];
  const headline = [
    judged > 0 ? `**${t.violated}/${judged} judged runs violated (${percent(t.asr ?? 0)})**` : '**no judged runs**',
    `${summary.cases} case${summary.cases === 1 ? '' : 's'}`,
    `${summary.runs} run${summary.runs === 1 ? '' : 's'}`,
    `${t.notApplicable} N/A`,
    `${t.errors} error${t.errors === 1 ? '' : 's'}`,
  ];
  if (summary.agents.length) headline.push(`agent ${summary.agents.map((a) => `\`${a.replace(/`/g, '')}\``).join(', ')}`);
  out.push(headline.join(' · '), '');
  const unconfined = unconfinedRuns(runs);
  if (unconfined > 0) out.push(`> ⚠ **UNCONFINED**: ${unconfinedWarning(unconfined)}`, '');
  if (runs.length === 0) return `${out.join('\n')}\n`;
  out.push(...matrix(summary.risk, 'risk', { tree: true, intervals: summary.repeats }), '');
  const utility = summary.risk.columns.filter((c) => summary.risk.columnTotals[c]!.utilityRuns > 0);
  if (utility.length) {
    const parts = utility.map((c) => {
      const cell = summary.risk.columnTotals[c]!;
      return `${c} ${cell.utilityHeld}/${cell.utilityRuns} (${percent(cell.utilityHeld / cell.utilityRuns)})`;
    });
    out.push(`Utility under attack (the honest task still got done): ${parts.join(' · ')}`, '');
  }
  const attribution = renderAttribution(summary.risk);
  if (attribution) out.push(`${attribution.charAt(0).toUpperCase()}${attribution.slice(1)}`, '');
  out.push('<details><summary>By attack method, environment and agent</summary>', '');
  out.push(...compact(summary.attack, 'attack method', summary.repeats), '');
  out.push(...compact(summary.environment, 'environment', summary.repeats), '');
  if (summary.agents.length > 1) out.push(...compact(summary.agent, 'agent', summary.repeats), '');
  out.push('</details>', '');
  const section = (title: string, status: string, text: (r: ReportRun) => string) => {
    const items = runs.filter((r) => (r.row.status ?? 'error') === status);
    if (!items.length) return;
    out.push(`### ${title} (${items.length})`, '');
    for (const r of items.slice(0, limit)) {
      const where = `\`${r.row.caseId}\` [${r.row.threatModel}]${r.row.repeat ? ` #${r.row.repeat + 1}` : ''}`;
      out.push(`- ${where} ${mdEscape(r.title)} — ${mdEscape(text(r))}${r.caseEdited ? ' _(case edited since this run)_' : ''}`);
    }
    if (items.length > limit) out.push(`- … ${items.length - limit} more`);
    out.push('');
  };
  section('Violations', 'violated', (r) => r.evidence[0] ?? '');
  section('Errors', 'error', (r) => r.reason ?? 'no verdict');
  section('Not applicable', 'not-applicable', (r) => r.reason ?? '');
  return `${out.join('\n').trimEnd()}\n`;
}
