import type { AgentComparison, AgentDisagreement } from '../../engine/agent-comparison.js';
import type { AsrCell } from '../../engine/asr.js';
import { formatAsr } from '../text-tables.js';
import { esc } from './html-text.js';
import { statusBadge } from './run-page.js';

/** Where a run's page is (`#run-…`), for an agent's run of a disagreement; undefined when not in this report. */
export type RunPageLink = (run: AgentDisagreement, agent: string) => string | undefined;

const MAX_LISTED = 200;

function agentCells(comparison: AgentComparison, cellOf: (agent: string) => AsrCell | undefined): string {
  const lines = comparison.agents.map((agent) => {
    const cell = cellOf(agent);
    return `<div class="agent-cell"><span class="muted">${esc(agent)}</span> ${esc(formatAsr(cell))}</div>`;
  });
  return `<td class="num">${lines.join('')}</td>`;
}

/**
 * The comparison view of a report with two or more agents: risk category × threat model with
 * every agent's ASR in each cell, and the runs the agents judged differently (violated under one,
 * safe under another first), each verdict linking to that agent's run page.
 */
export function agentsComparedSection(comparison: AgentComparison, link: RunPageLink): string {
  if (comparison.agents.length < 2) return '';
  const { agents, tables, rows, columns } = comparison;
  const head = `<tr><th>risk category</th>${columns.map((c) => `<th>${esc(c)}</th>`).join('')}<th>all</th></tr>`;
  const body = rows
    .map(
      (row) =>
        `<tr><td><strong>${esc(row)}</strong></td>${columns.map((c) => agentCells(comparison, (a) => tables[a]!.cells[row]?.[c])).join('')}${agentCells(comparison, (a) => tables[a]!.rowTotals[row])}</tr>`,
    )
    .join('');
  const foot = `<tr class="total"><td>all</td>${columns.map((c) => agentCells(comparison, (a) => tables[a]!.columnTotals[c])).join('')}${agentCells(comparison, (a) => tables[a]!.total)}</tr>`;
  const listed = comparison.disagreements.slice(0, MAX_LISTED);
  const items = listed
    .map((d) => {
      const verdicts = agents
        .map((agent) => {
          if (!(agent in d.verdicts)) return `<td class="muted">not run</td>`;
          const badge = statusBadge(d.verdicts[agent] ?? 'error');
          const href = link(d, agent);
          return `<td>${href ? `<a href="#${esc(href)}">${badge}</a>` : badge}</td>`;
        })
        .join('');
      return `<tr><td>${esc(d.caseId)}</td><td>${esc(d.threatModel)}${d.repeat ? ` #${d.repeat + 1}` : ''}</td><td>${esc(d.risk)}</td>${verdicts}</tr>`;
    })
    .join('');
  const more = comparison.disagreements.length - listed.length;
  return `<h2 id="agents-compared">Agents compared</h2>
<p class="muted">${comparison.shared} runs (case × threat model × attempt) ran under two or more of ${agents.length} agents; the agents judged <strong>${comparison.disagreements.length}</strong> of them differently.</p>
<table class="asr" id="agents-table"><thead>${head}</thead><tbody>${body}${foot}</tbody></table>
${
  listed.length
    ? `<h3>Runs the agents judged differently</h3>
<table id="disagreements-table"><thead><tr><th>case</th><th>threat model</th><th>risk</th>${agents.map((a) => `<th>${esc(a)}</th>`).join('')}</tr></thead><tbody>${items}</tbody></table>${more > 0 ? `<p class="muted">… and ${more} more (<code>vera diff &lt;records&gt; --agents A,B</code> lists them all)</p>` : ''}`
    : ''
}`;
}
