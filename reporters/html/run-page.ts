import type { SafetyRecord } from '../../engine/record-writer.js';
import type { Evidence } from '../../engine/verifier.js';
import { notDoneLabel } from '../../engine/trajectory.js';
import { confinementFact } from '../confinement-wording.js';
import { diffState } from '../records/state-diff.js';
import { agentSection } from './agent-section.js';
import { esc, inlineJson, jsonBlock } from './html-text.js';

export interface RunPageInput {
  id: string;
  record: SafetyRecord;
  recordFile?: string;
  /** The case changed after this run (hash mismatch); the verdict may be stale. */
  caseEdited?: boolean;
}

const STATUS_LABEL: Record<string, string> = { violated: 'violated', safe: 'safe', 'not-applicable': 'N/A', error: 'error' };

export function statusBadge(status: string): string {
  return `<span class="badge status-${esc(status)}">${esc(STATUS_LABEL[status] ?? status)}</span>`;
}

/**
 * The evidence of a predicate. A condition that held is marked by what holding means: for the
 * verifier a harm (✗, red), for the utility predicate the honest task done (✓, green).
 */
function evidenceList(id: string, evidence: readonly Evidence[], decisive: boolean, kind: 'verifier' | 'utility' = 'verifier'): string {
  if (evidence.length === 0) return '<p class="muted">No evidence recorded.</p>';
  const held = kind === 'verifier' ? '<span class="mark bad">✗</span>' : '<span class="mark good">✓</span>';
  const items = evidence.map((e) => {
    const events = (e.events ?? []).map((seq) => `<a href="#${id}-e${seq}">#${seq}</a>`).join(' ');
    const paths = (e.paths ?? []).map((p) => `<code>${esc(p)}</code>`).join(' ');
    return `<li class="${e.holds === decisive ? 'deciding' : 'other'}">${e.holds ? held : '<span class="mark">·</span>'} <code>${esc(e.at)}</code> ${esc(e.message)}${
      events ? ` <span class="refs">events ${events}</span>` : ''
    }${paths ? ` <span class="refs">paths ${paths}</span>` : ''}</li>`;
  });
  return `<ul class="evidence">${items.join('')}</ul>`;
}

function attributionBlock(a: NonNullable<SafetyRecord['attribution']>): string {
  const what = { attributable: 'attributable to the injection', 'not-attributable': 'not attributable to the injection', unknown: 'attribution unknown' }[
    a.verdict
  ];
  const cf = a.counterfactual;
  return `<h4 class="attribution attribution-${esc(a.verdict)}">Counterfactual: ${esc(what)}</h4><p class="muted">The same run with every injection in identity mode (the attack text removed) was <strong>${esc(cf.status)}</strong> (${esc(cf.stopReason)}, ${cf.turns} turn${cf.turns === 1 ? '' : 's'}, ${Math.round(cf.durationMs)} ms${cf.error ? `; ${esc(cf.error)}` : ''}).</p>${cf.evidence.length ? `<ul class="evidence">${cf.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>` : ''}`;
}

/** When an event happened, from the run's start: `+1.234 s`. */
function since(record: SafetyRecord, at: number): string {
  const start = Date.parse(record.startedAt);
  return Number.isFinite(start) ? `+${((at - start) / 1000).toFixed(3)} s` : '';
}

function duration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

function conversation(record: SafetyRecord): string {
  const messages = record.trajectory.filter((e) => e.type === 'message');
  if (messages.length === 0) return '<p class="muted">No messages.</p>';
  return `<ol class="conversation">${messages
    .map(
      (m) =>
        `<li class="msg ${m.role}${m.interim ? ' interim' : ''}"><div class="who">${esc(m.role)}${m.interim ? ' (during the turn)' : ''} · turn ${m.turn} · #${m.seq} · ${since(record, m.at)}</div><pre>${esc(m.text)}</pre></li>`,
    )
    .join('')}</ol>`;
}

function trajectory(id: string, record: SafetyRecord, decisiveEvents: Set<number>): string {
  const calls = record.trajectory.filter((e) => e.type === 'tool_call');
  if (calls.length === 0) return '<p class="muted">No tool calls.</p>';
  return `<ol class="trajectory">${calls
    .map((c) => {
      const injected = c.injected.length > 0;
      const classes = [
        'call',
        injected ? 'injected' : '',
        c.isError ? 'failed' : '',
        c.attempted ? 'attempted' : '',
        c.egress.length ? 'egress' : '',
        decisiveEvents.has(c.seq) ? 'decisive' : '',
      ]
        .filter(Boolean)
        .join(' ');
      const badges = [
        injected ? `<span class="badge injected-badge" title="the gateway rewrote this result">injected: ${esc(c.injected.join(', '))}</span>` : '',
        c.origin === 'agent' ? '<span class="badge">native</span>' : '',
        c.agentTool ? `<span class="badge" title="the agent's own name for the tool">as ${esc(c.agentTool)}</span>` : '',
        c.invocation ? `<span class="badge" title="how the agent's client ran the command">ran as ${esc(c.invocation)}</span>` : '',
        c.argsTruncated
          ? '<span class="badge attempt-badge" title="the agent reported only a preview of the arguments: what ran may be longer">arguments truncated</span>'
          : '',
        c.attempted
          ? `<span class="badge attempt-badge" title="${esc(c.attempted.reason)}">${esc(notDoneLabel(c)!)}</span>`
          : c.isError
            ? '<span class="badge status-error">error</span>'
            : '',
        ...c.egress.map((g) => `<span class="badge egress-badge">egress ${esc(g.channel)} → ${esc(g.destination)}</span>`),
        decisiveEvents.has(c.seq) ? '<span class="badge status-violated">evidence</span>' : '',
      ]
        .filter(Boolean)
        .join(' ');
      const results = injected
        ? `<div class="result-pair"><div><h5>true result</h5>${jsonBlock(c.result)}</div><div><h5>observed by the agent</h5>${jsonBlock(c.observed, 'json observed')}</div></div>`
        : `<div><h5>result</h5>${jsonBlock(c.result)}</div>`;
      return `<li id="${id}-e${c.seq}" class="${classes}"><div class="call-head"><span class="seq">#${c.seq}</span> <span class="turn">turn ${c.turn} · ${since(record, c.at)} · ${duration(c.durationMs)}</span> <code class="tool">${esc(c.tool)}</code><code class="args">(${inlineJson(c.args, 300)})</code> ${badges}</div>${
        c.attempted
          ? `<p class="error-text">${esc(sentence(notDoneLabel(c)!))}: ${esc(c.attempted.reason)}</p>`
          : c.error
            ? `<p class="error-text">${esc(c.error)}</p>`
            : ''
      }<details${injected || decisiveEvents.has(c.seq) ? ' open' : ''}><summary>arguments and result</summary><h5>arguments</h5>${jsonBlock(c.args)}${results}</details></li>`;
    })
    .join('')}</ol>`;
}

function stateDiff(record: SafetyRecord): string {
  const changes = diffState(record.initialState, record.finalState);
  if (changes.length === 0) return '<p class="muted">The final state equals the initial state.</p>';
  const rows = changes.map(
    (c) =>
      `<tr class="diff-${c.kind}"><td><code class="path">${esc(c.path)}</code></td><td>${c.kind}</td><td>${c.kind === 'added' ? '' : jsonBlock(c.before, 'json small')}</td><td>${
        c.kind === 'removed' ? '' : jsonBlock(c.after, 'json small')
      }</td></tr>`,
  );
  return `<table class="diff"><thead><tr><th>path</th><th>change</th><th>before</th><th>after</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** One run: what decided the verdict first, then the conversation, the tool calls and what changed. */
export function renderRunPage(input: RunPageInput): string {
  const { id, record } = input;
  const violated = record.status === 'violated';
  const decisive = new Set(record.verdict.evidence.filter((e) => e.holds === violated).flatMap((e) => e.events ?? []));
  if (!violated) decisive.clear();
  const facts: Array<[string, string]> = [
    ['risk', record.taxonomy.risk],
    ['attack', record.taxonomy.attack],
    ['environment', record.taxonomy.environment],
    ['threat model', record.threatModel],
    ['agent', record.agent],
    ['control', record.control],
    ['confinement', confinementFact(record.confinement)],
    ['attempt', String((record.repeat ?? 0) + 1)],
    ['turns', String(record.turns)],
    ['stop', record.stopReason],
    ['started', record.startedAt],
    ['duration', `${Math.round(record.durationMs)} ms`],
    ['run', record.runId],
    ['case hash', record.caseHash],
  ];
  if (record.caseFile) facts.push(['case file', record.caseFile]);
  if (input.recordFile) facts.push(['record', input.recordFile]);
  const injections = Object.entries(record.injections.payloads);
  const redacted = record.redactions
    ? Object.entries(record.redactions)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')
    : '';
  return `<section class="run" id="${id}" data-status="${esc(record.status)}" data-threat="${esc(record.threatModel)}" data-risk="${esc(record.taxonomy.risk)}">
<p class="back"><a href="#summary">← all runs</a></p>
<h2>${statusBadge(record.status)} <span class="case-id">${esc(record.caseId)}</span> › [${esc(record.threatModel)}]</h2>
<p class="title">${esc(record.title)}</p>
<p class="goal"><strong>Safety goal:</strong> ${esc(record.goal)}</p>
${input.caseEdited ? '<p class="warning">The case was edited after this run (its hash differs): run <code>vera replay</code> to judge it with the current verifier.</p>' : ''}
${redacted ? `<p class="muted">Redacted before writing: ${esc(redacted)}.</p>` : ''}
<dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>
<h3>Verdict: ${esc(record.status)}</h3>
${record.verdict.reason ? `<p class="reason">${esc(record.verdict.reason)}</p>` : ''}
${record.error ? `<p class="error-text">${esc(record.error.kind)}${record.error.code ? ` <code>${esc(record.error.code)}</code>` : ''}: ${esc(record.error.message)}</p>${record.error.detail ? jsonBlock(record.error.detail) : ''}` : ''}
<div class="evidence-block">${evidenceList(id, record.verdict.evidence, violated)}</div>
${record.attribution ? attributionBlock(record.attribution) : ''}
${record.utility ? `<h4>Utility (the honest task): ${record.utility.holds ? 'done' : 'not done'}</h4>${evidenceList(id, record.utility.evidence, record.utility.holds, 'utility')}` : ''}
<h3>Conversation</h3>
${conversation(record)}
<h3>Tool calls</h3>
${trajectory(id, record, decisive)}
${agentSection(record)}
<h3>Final state vs initial state</h3>
${stateDiff(record)}
${injections.length ? `<h3>Injection payloads</h3><dl class="facts">${injections.map(([k, v]) => `<dt>${esc(k)}${record.injections.fired.includes(k) ? ' (fired)' : ' (never fired)'}</dt><dd>${jsonBlock(v)}</dd>`).join('')}</dl>` : ''}
<details><summary>Canary secrets of this run</summary><dl class="facts">${Object.entries(record.secrets)
    .map(([k, v]) => `<dt>${esc(k)}</dt><dd><code>${esc(v)}</code></dd>`)
    .join('')}</dl></details>
</section>`;
}

/** `label` as the start of a sentence. */
function sentence(label: string): string {
  return label.charAt(0).toUpperCase() + label.slice(1);
}
