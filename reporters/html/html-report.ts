import { asrInterval, summarizeAsr, utilityRate, type AsrCell, type AsrTable, attributableAsr } from '../../engine/asr.js';
import { formatAsr, percent } from '../text-tables.js';
import type { SafetyRecord } from '../../engine/record-writer.js';
import { reportRunOfRecord } from '../summary/report-run.js';
import { compareAgents } from '../../engine/agent-comparison.js';
import { agentsComparedSection } from './agents-compared.js';
import { asrBarChart } from './charts.js';
import { REPORT_JS } from './client-script.js';
import { esc, slug } from './html-text.js';
import { renderRunPage, statusBadge } from './run-page.js';
import { REPORT_CSS } from './styles.js';
import { unconfinedWarning } from '../confinement-wording.js';

export interface HtmlReportRun {
  record: SafetyRecord;
  recordFile?: string;
  caseEdited?: boolean;
}

function heat(cell: AsrCell | undefined): string {
  if (!cell || cell.asr === undefined) return '';
  // White at 0%, red at 100%: the eye finds the broken cells first.
  return ` style="background: hsl(4 80% ${Math.round(97 - cell.asr * 30)}%)"`;
}

function cellHtml(cell: AsrCell | undefined, intervals: boolean): string {
  return `<td class="num"${heat(cell)}>${esc(formatAsr(cell, { interval: intervals }))}</td>`;
}

function labelCell(key: string, tree: boolean): string {
  const parts = key.split('/');
  if (!tree || parts.length === 1) return `<td><strong>${esc(key)}</strong></td>`;
  return `<td class="tree-${Math.min(parts.length - 1, 3)}" title="${esc(key)}">↳ ${esc(parts.at(-1)!)}</td>`;
}

function matrixTable(table: AsrTable, header: string, options: { tree: boolean; intervals: boolean; id: string }): string {
  const head = `<tr><th>${esc(header)}</th>${table.columns.map((c) => `<th>${esc(c)}</th>`).join('')}<th>all</th></tr>`;
  const body = table.rows
    .map(
      (row) =>
        `<tr data-key="${esc(row)}">${labelCell(row, options.tree)}${table.columns.map((c) => cellHtml(table.cells[row]?.[c], false)).join('')}${cellHtml(table.rowTotals[row], options.intervals)}</tr>`,
    )
    .join('');
  const foot = `<tr class="total"><td>all</td>${table.columns.map((c) => cellHtml(table.columnTotals[c], false)).join('')}${cellHtml(table.total, options.intervals)}</tr>`;
  return `<table class="asr" id="${options.id}"><thead>${head}</thead><tbody>${body}${foot}</tbody></table>`;
}

function compactTable(table: AsrTable, header: string, options: { intervals: boolean; id: string; tree: boolean }): string {
  const head = `<tr><th>${esc(header)}</th><th>violated/judged</th><th>ASR</th>${options.intervals ? '<th>95% CI</th>' : ''}<th>N/A</th><th>err</th></tr>`;
  const line = (label: string, cell: AsrCell, total = false) => {
    const judged = cell.violated + cell.safe;
    const interval = asrInterval(cell);
    return `<tr${total ? ' class="total"' : ''}>${label}<td class="num">${cell.violated}/${judged}</td><td class="num"${heat(cell)}>${judged ? percent(cell.asr ?? 0) : '–'}</td>${
      options.intervals ? `<td class="num">${interval ? `${percent(interval.low)}–${percent(interval.high)}` : '–'}</td>` : ''
    }<td class="num">${cell.notApplicable}</td><td class="num">${cell.errors}</td></tr>`;
  };
  const body = table.rows.map((row) => line(labelCell(row, options.tree), table.rowTotals[row]!)).join('');
  return `<table class="asr compact" id="${options.id}"><thead>${head}</thead><tbody>${body}${line('<td>all</td>', table.total, true)}</tbody></table>`;
}

function utilityTable(table: AsrTable): string {
  const cols = table.columns.filter((c) => table.columnTotals[c]!.utilityRuns > 0);
  if (!cols.length) return '';
  return `<h3>Utility under attack</h3><p class="muted">Share of runs whose utility predicate held — the honest task still got done.</p><table class="asr" id="utility-table"><thead><tr>${cols
    .map((c) => `<th>${esc(c)}</th>`)
    .join('')}</tr></thead><tbody><tr>${cols
    .map((c) => {
      const cell = table.columnTotals[c]!;
      return `<td class="num">${cell.utilityHeld}/${cell.utilityRuns} ${percent(utilityRate(cell)!)}</td>`;
    })
    .join('')}</tr></tbody></table>`;
}

/** The attributable ASR per threat model, beside the raw ASR, where violations had counterfactuals. */
function attributionTable(table: AsrTable): string {
  const cols = table.columns.filter((c) => table.columnTotals[c]!.attributionRuns > 0);
  if (!cols.length) return '';
  const cell = (c: string) => {
    const x = table.columnTotals[c]!;
    const judged = x.violated + x.safe;
    return `<td class="num">${x.attributable}/${judged} ${percent(attributableAsr(x)!)} <span class="muted">(raw ${x.violated}/${judged})</span></td>`;
  };
  return `<h3>Attributable ASR</h3><p class="muted">Violations the injected text caused: the same run with every injection in identity mode (the attack text removed) was safe.</p><table class="asr" id="attribution-table"><thead><tr>${cols
    .map((c) => `<th>${esc(c)}</th>`)
    .join('')}</tr></thead><tbody><tr>${cols.map(cell).join('')}</tr></tbody></table>`;
}

function options(values: string[], label: (v: string) => string = (v) => v): string {
  return values.map((v) => `<option value="${esc(v)}">${esc(label(v))}</option>`).join('');
}

/**
 * One self-contained HTML file (inline CSS, SVG and a small script; nothing fetched): the ASR
 * tables and charts, a filterable list of runs, and a page per run with its evidence, the
 * conversation, the tool calls (injected results marked, true result beside what the agent saw)
 * and the final-state diff. Pages are sections shown by URL fragment (`#run-…`).
 */
export function renderHtmlReport(runs: readonly HtmlReportRun[], opts: { title?: string; generatedAt?: Date; source?: string } = {}): string {
  const sorted = [...runs].sort(
    (a, b) =>
      a.record.caseId.localeCompare(b.record.caseId) ||
      a.record.threatModel.localeCompare(b.record.threatModel) ||
      (a.record.repeat ?? 0) - (b.record.repeat ?? 0) ||
      a.record.agent.localeCompare(b.record.agent),
  );
  const reportRuns = sorted.map((r) =>
    reportRunOfRecord(r.record, { ...(r.recordFile ? { recordFile: r.recordFile } : {}), caseEdited: Boolean(r.caseEdited) }),
  );
  const summary = summarizeAsr(reportRuns.map((r) => r.row));
  const used = new Set<string>();
  const ids = sorted.map((r) => {
    const base = `run-${slug(r.record.caseId)}--${slug(r.record.threatModel)}${r.record.repeat ? `--r${r.record.repeat}` : ''}`;
    let id = base;
    for (let i = 2; used.has(id); i++) id = `${base}-${i}`;
    used.add(id);
    return id;
  });
  // Only a report of two or more agents compares them (a one-agent report of the whole library skips the work).
  const pageOfRun = (run: { caseId: string; threatModel: string; repeat: number }, agent: string) =>
    `${run.caseId}\u0000${run.threatModel}\u0000${run.repeat}\u0000${agent}`;
  const pages = new Map(sorted.map((r, i) => [pageOfRun({ ...r.record, repeat: r.record.repeat ?? 0 }, r.record.agent), ids[i]!]));
  const agentsCompared =
    summary.agents.length > 1 ? agentsComparedSection(compareAgents(reportRuns.map((r) => r.row)), (run, agent) => pages.get(pageOfRun(run, agent))) : '';
  const title = opts.title ?? 'Vera safety report';
  const t = summary.total;
  const judged = t.violated + t.safe;
  const intervals = summary.repeats;
  const categories = summary.risk.rows.filter((r) => !r.includes('/'));
  const charts = [
    asrBarChart(
      'ASR by threat model',
      summary.risk.columns.map((c) => ({ label: c, cell: summary.risk.columnTotals[c]! })),
      { intervals },
    ),
    asrBarChart(
      'ASR by risk category',
      categories.map((c) => ({ label: c, cell: summary.risk.rowTotals[c]! })),
      { intervals },
    ),
  ].join('');
  const runRows = sorted
    .map((r, i) => {
      const rec = r.record;
      const evidence = reportRuns[i]!.evidence[0] ?? reportRuns[i]!.reason ?? '';
      return `<tr data-status="${esc(rec.status)}" data-risk="${esc(rec.taxonomy.risk)}" data-threat="${esc(rec.threatModel)}"><td><a href="#${ids[i]}">${esc(rec.caseId)}</a>${
        r.caseEdited ? ' <span class="badge status-not-applicable" title="the case changed after this run">edited</span>' : ''
      }</td><td>${esc(rec.threatModel)}${rec.repeat ? ` #${rec.repeat + 1}` : ''}</td><td>${statusBadge(rec.status)}</td><td>${esc(rec.taxonomy.risk)}</td><td>${esc(rec.taxonomy.attack)}</td><td>${esc(
        rec.taxonomy.environment,
      )}</td><td>${esc(rec.agent)}</td><td class="ev">${esc(evidence.length > 200 ? `${evidence.slice(0, 199)}…` : evidence)}</td></tr>`;
    })
    .join('');
  const statuses = ['violated', 'safe', 'not-applicable', 'error'].filter((s) => sorted.some((r) => r.record.status === s));
  const edited = reportRuns.filter((r) => r.caseEdited).length;
  const unconfined = sorted.filter((r) => r.record.confinement === 'none').length;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<header class="top"><h1>${esc(title)}</h1><div class="muted">${esc(`generated ${(opts.generatedAt ?? new Date()).toISOString()}`)}${opts.source ? ` from ${esc(opts.source)}` : ''}</div></header>
<main>
<div id="summary">
<p class="headline">${judged ? `<strong>${t.violated}/${judged}</strong> judged runs violated the safety goal (<strong>${percent(t.asr ?? 0)}</strong>)` : 'No judged runs'} · ${summary.cases} cases · ${summary.runs} runs · ${t.notApplicable} N/A · ${t.errors} errors${
    summary.agents.length ? ` · agent ${summary.agents.map((a) => `<code>${esc(a)}</code>`).join(', ')}` : ''
  }</p>
${unconfined ? `<p class="warning" id="unconfined-warning"><strong>UNCONFINED:</strong> ${esc(unconfinedWarning(unconfined))}</p>` : ''}
${edited ? `<p class="warning">${edited} run(s) are of cases edited since they ran (marked <em>edited</em>); <code>vera replay</code> judges them with the current verifiers.</p>` : ''}
<h2>Attack success rate by risk and threat model</h2>
<p class="muted">ASR = violated / (violated + safe). N/A (the injection never reached the agent) and errors are counted apart.${intervals ? ' Intervals are 95% Wilson intervals over repeated runs.' : ''}</p>
${matrixTable(summary.risk, 'risk', { tree: true, intervals, id: 'risk-table' })}
<div class="charts">${charts}</div>
${utilityTable(summary.risk)}
${attributionTable(summary.risk)}
<h3>By attack method</h3>
${compactTable(summary.attack, 'attack method', { intervals, id: 'attack-table', tree: true })}
<h3>By environment</h3>
${compactTable(summary.environment, 'environment', { intervals, id: 'environment-table', tree: true })}
${summary.agents.length > 1 ? `<h3>By agent</h3>${compactTable(summary.agent, 'agent', { intervals, id: 'agent-table', tree: false })}` : ''}
${agentsCompared}
<h2>Runs</h2>
<div class="filters">
<label>status <select id="filter-status"><option value="">all</option>${options(statuses)}</select></label>
<label>risk <select id="filter-risk"><option value="">all</option>${options(summary.risk.rows, (r) => `${'\u00a0\u00a0'.repeat(r.split('/').length - 1)}${r}`)}</select></label>
<label>threat model <select id="filter-threat"><option value="">all</option>${options(summary.risk.columns)}</select></label>
<label>text <input id="filter-text" type="search" placeholder="case, evidence…"></label>
<span id="filter-count" class="muted"></span>
</div>
<table id="runs-table"><thead><tr><th>case</th><th>threat model</th><th>verdict</th><th>risk</th><th>attack</th><th>environment</th><th>agent</th><th>evidence / reason</th></tr></thead><tbody>${runRows}</tbody></table>
</div>
${sorted.map((r, i) => renderRunPage({ id: ids[i]!, record: r.record, ...(r.recordFile ? { recordFile: r.recordFile } : {}), ...(r.caseEdited ? { caseEdited: true } : {}) })).join('\n')}
</main>
<script>${REPORT_JS}</script>
</body>
</html>
`;
}
