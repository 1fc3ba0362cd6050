/** The report's only stylesheet, inlined: the file opens from disk, offline, in any browser. */
export const REPORT_CSS = `
:root { --fg:#1b1f24; --muted:#5f6b7a; --line:#d8dee4; --bg:#fff; --soft:#f6f8fa; --bad:#c62828; --good:#2e7d32; --na:#8a6d00; --err:#6a1b9a; --inj:#e65100; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header.top { padding: 14px 24px; border-bottom: 1px solid var(--line); background: var(--soft); }
header.top h1 { margin: 0 0 4px; font-size: 20px; }
main { padding: 8px 24px 48px; max-width: 1280px; }
h2 { font-size: 18px; margin: 20px 0 8px; } h3 { font-size: 15px; margin: 18px 0 6px; } h4 { margin: 12px 0 4px; } h5 { margin: 6px 0 2px; font-size: 12px; color: var(--muted); }
.muted { color: var(--muted); }
.headline { font-size: 16px; }
table { border-collapse: collapse; margin: 6px 0 14px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; vertical-align: top; }
th { background: var(--soft); text-align: left; font-weight: 600; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; background: var(--soft); }
td.tree-1 { padding-left: 24px; } td.tree-2 { padding-left: 40px; } td.tree-3 { padding-left: 56px; }
.badge { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 12px; border: 1px solid var(--line); background: var(--soft); }
.status-violated { background: #fdecea; color: var(--bad); border-color: #f5c2c0; }
.status-safe { background: #e8f5e9; color: var(--good); border-color: #b9dfbb; }
.status-not-applicable { background: #fff8e1; color: var(--na); border-color: #f2dc8d; }
.status-error { background: #f3e5f5; color: var(--err); border-color: #dcb9e3; }
.injected-badge { background: #fff3e0; color: var(--inj); border-color: #ffcc80; font-weight: 600; }
.egress-badge { background: #e3f2fd; color: #0d47a1; border-color: #90caf9; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
svg.chart text { font: 12px system-ui, sans-serif; fill: var(--fg); }
svg.chart .chart-title { font-weight: 600; font-size: 13px; }
svg.chart .track { fill: #eef1f4; } svg.chart .bar { fill: var(--bad); } svg.chart .grid { stroke: #e3e7eb; }
svg.chart .whisker { stroke: #1b1f24; stroke-width: 2; } svg.chart .tick { fill: var(--muted); font-size: 11px; }
.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 8px 10px; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; margin: 10px 0; }
.filters label { display: flex; gap: 6px; align-items: center; }
#runs-table tr.hidden { display: none; }
.run { display: none; }
.run:target { display: block; }
body:has(.run:target) #summary { display: none; }
.back { margin: 14px 0 0; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr) max-content minmax(0, 1fr); gap: 2px 12px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; word-break: break-all; }
ul.evidence { padding-left: 18px; } ul.evidence li { margin: 3px 0; } ul.evidence li.deciding { font-weight: 600; } ul.evidence li.other { color: var(--muted); } .mark.bad { color: var(--bad); } .mark.good { color: var(--good); }
.refs { color: var(--muted); font-weight: normal; }
.warning { background: #fff8e1; border: 1px solid #f2dc8d; padding: 6px 10px; border-radius: 6px; }
.error-text { color: var(--err); }
ol.conversation, ol.trajectory { list-style: none; padding: 0; margin: 0; }
.msg { margin: 6px 0; padding: 6px 10px; border-radius: 8px; max-width: 900px; }
.msg.user { background: #eef4ff; } .msg.assistant { background: #f1f8e9; margin-left: 48px; }
.msg .who { font-size: 12px; color: var(--muted); }
pre { margin: 2px 0; white-space: pre-wrap; word-break: break-word; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.json { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 6px; max-height: 360px; overflow: auto; }
pre.json.observed { background: #fff3e0; border-color: #ffcc80; }
pre.json.small { max-height: 180px; border: 0; padding: 2px; }
li.call { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 6px 0; }
li.call.injected { border-left: 5px solid var(--inj); }
li.call.decisive { border-color: var(--bad); box-shadow: 0 0 0 1px var(--bad) inset; }
li.call .seq { color: var(--muted); } li.call .turn { color: var(--muted); font-size: 12px; }
code.tool { font-weight: 700; } code.args { color: var(--muted); }
.result-pair { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; }
table.diff td { max-width: 520px; } tr.diff-added td:nth-child(2) { color: var(--good); } tr.diff-removed td:nth-child(2) { color: var(--bad); } tr.diff-changed td:nth-child(2) { color: var(--inj); }
li.call.attempted { border-style: dashed; opacity: 0.85; }
.attempt-badge { background: #fff8e1; color: var(--na); border-color: #f2dc8d; }
.msg.interim { opacity: 0.8; border-left: 3px solid #c5e1a5; }
table.turns td { font-size: 13px; } p.tools { margin: 2px 0; } p.tools code { margin-right: 4px; }
details.prompt { margin: 4px 0; } dl.tool-descriptions dt { margin-top: 4px; } dl.tool-descriptions dd { margin: 0 0 0 16px; color: var(--muted); }
a { color: #0b5fcc; }
`;
