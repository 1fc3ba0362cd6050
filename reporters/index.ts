/** `vera-safety/reporters`: Vitest reporters over Vera's test meta, and reports built from records. */
export { AsrReporter, collectAsrRows, type AsrReporterOptions } from './asr-reporter.js';
export { ProgressTracker } from './progress.js';
export { renderHtmlReport, type HtmlReportRun } from './html/html-report.js';
export { buildJsonSummary, type JsonSummary, type JsonCell, type JsonTable, type JsonFinding } from './summary/json-summary.js';
export { renderMarkdownSummary } from './summary/markdown-summary.js';
export { reportRunOfRecord, reportRunOfMeta, decidingEvidence, type ReportRun } from './summary/report-run.js';
export { loadRecords, runKey, type StoredRecord, type LoadedRecords } from './records/load-records.js';
export { CaseIndex, type CaseLookup } from './records/case-index.js';
export { reverify, replayRecords, type ReplayResult } from './records/replay.js';
export { diffRecordSets, type RecordSetDiff, type RunChange } from './records/record-diff.js';
export { diffState, type StateChange } from './records/state-diff.js';
export { renderAsrTable, renderCompactTable, renderUtility, renderAttribution, renderStatistics, formatAsr, formatRate } from './text-tables.js';
