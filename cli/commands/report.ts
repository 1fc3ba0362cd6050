import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { summarizeAsr } from '../../engine/asr.js';
import { renderAsrTable, renderAttribution, renderCompactTable, renderUtility } from '../../reporters/text-tables.js';
import { renderHtmlReport } from '../../reporters/html/html-report.js';
import { buildJsonSummary } from '../../reporters/summary/json-summary.js';
import { renderMarkdownSummary } from '../../reporters/summary/markdown-summary.js';
import { reportRunOfRecord } from '../../reporters/summary/report-run.js';
import type { CliCommand } from '../main.js';
import { parseArgs } from '../parse-args.js';
import { recordsInput } from '../records-input.js';

/**
 * `vera report <records-dir>`: rebuilds every report from stored records, without running an
 * agent: one self-contained HTML file, a JSON summary and a Markdown summary (next to the HTML
 * unless given their own paths), and the ASR tables on stdout.
 */
export const reportCommand: CliCommand = {
  name: 'report',
  summary: 'build the HTML report and JSON/Markdown summaries from stored records',
  usage:
    'vera report [records-dir] [--out report.html] [--json summary.json] [--markdown summary.md] [--cases <dir>] [--all-runs] [--newest-only] [--title <text>]\n' +
    "  records-dir: a run directory or the records root (default: the recordDir of the project's Vera plugin, else .vera/records);\n" +
    '    the newest record of each agent × case × threat model × attempt is reported, every agent side by side\n' +
    '    (--newest-only: only the newest run of each case, whichever agent; --all-runs: every record)\n' +
    "  --cases: where the current case files are (default: each record's caseFile) — records of edited cases are flagged",
  async run(args, io) {
    const { positional, flags } = parseArgs(args, { values: ['out', 'json', 'markdown', 'cases', 'title'], booleans: ['all-runs', 'newest-only'] });
    const input = await recordsInput(positional, flags, io, this.usage);
    if (typeof input === 'number') return input;
    const { loaded, cases } = input;
    const runs = [];
    for (const item of loaded.records) {
      const lookup = await cases.forRecord(item.record);
      runs.push({ ...item, caseEdited: lookup.ok && lookup.hash !== item.record.caseHash });
    }
    const out = resolve(io.cwd, String(flags.out ?? 'report.html'));
    const base = out.replace(/\.html?$/i, '');
    const jsonFile = resolve(io.cwd, String(flags.json ?? `${base}.json`));
    const markdownFile = resolve(io.cwd, String(flags.markdown ?? `${base}.md`));
    const title = flags.title ? String(flags.title) : undefined;
    const reportRuns = runs.map((r) => reportRunOfRecord(r.record, { recordFile: r.file, caseEdited: r.caseEdited }));
    const html = renderHtmlReport(
      runs.map((r) => ({ record: r.record, recordFile: relative(dirname(out), r.file), caseEdited: r.caseEdited })),
      { ...(title ? { title } : {}), source: input.dir },
    );
    for (const [file, text] of [
      [out, html],
      [jsonFile, `${JSON.stringify(buildJsonSummary(reportRuns), null, 2)}\n`],
      [markdownFile, renderMarkdownSummary(reportRuns, title ? { title } : {})],
    ] as const) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
    }
    const summary = summarizeAsr(reportRuns.map((r) => r.row));
    io.out(renderAsrTable(summary.risk, { tree: true, intervals: summary.repeats, rowHeader: 'risk' }));
    const utility = [renderUtility(summary.risk), renderAttribution(summary.risk)].filter(Boolean).join('\n');
    if (utility) io.out(utility);
    io.out('');
    io.out(renderCompactTable(summary.attack, { rowHeader: 'attack method', tree: true, intervals: summary.repeats }));
    io.out('');
    io.out(renderCompactTable(summary.environment, { rowHeader: 'environment', tree: true, intervals: summary.repeats }));
    io.out('');
    const edited = runs.filter((r) => r.caseEdited).length;
    io.out(
      `${loaded.records.length} records${loaded.superseded ? ` (${loaded.superseded} older superseded; --all-runs keeps them)` : ''}${edited ? `, ${edited} of edited cases (flagged)` : ''}`,
    );
    io.out(`wrote ${relative(io.cwd, out)}, ${relative(io.cwd, jsonFile)}, ${relative(io.cwd, markdownFile)}`);
    return 0;
  },
};
