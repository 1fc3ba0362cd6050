import { asrInterval, summarizeAsr, utilityRate, type AsrCell, type AsrTable, attributableAsr } from '../../engine/asr.js';
import { summarizeTraffic, type PriceTable, type TrafficSummary } from '../traffic.js';
import { unconfinedRuns, type ReportRun } from './report-run.js';

export interface JsonCell {
  violated: number;
  safe: number;
  notApplicable: number;
  errors: number;
  judged: number;
  /** violated / judged; null when nothing was judged. */
  asr: number | null;
  /** 95% Wilson interval of the ASR; null when nothing was judged. */
  interval: { low: number; high: number } | null;
  /** Utility under attack: runs whose utility predicate held, of those that have one; null when none. */
  utility: { held: number; runs: number; rate: number } | null;
  /**
   * Attributable ASR: violations whose counterfactual (the injections in identity mode) was
   * safe, over the judged runs; null when no violated run had a counterfactual.
   */
  attribution: { attributable: number; counterfactuals: number; asr: number } | null;
}

export interface JsonTable {
  /** Row keys in display order (taxonomy tables: each parent before its children). */
  rows: string[];
  threatModels: string[];
  all: Record<string, JsonCell>;
  byThreatModel: Record<string, Record<string, JsonCell>>;
}

export interface JsonFinding {
  caseId: string;
  title: string;
  threatModel: string;
  status: string;
  risk: string;
  attack: string;
  environment: string;
  agent?: string;
  repeat?: number;
  evidence: string[];
  reason?: string;
  caseFile?: string;
  recordFile?: string;
  caseEdited?: boolean;
}

/** `vera.summary/v1`: machine-readable totals and every non-safe run. */
export interface JsonSummary {
  schema: 'vera.summary/v1';
  generatedAt: string;
  runs: number;
  cases: number;
  agents: string[];
  /** Intervals are meaningful only when some case ran more than once. */
  repeats: boolean;
  total: JsonCell;
  byThreatModel: Record<string, JsonCell>;
  byRisk: JsonTable;
  byAttack: JsonTable;
  byEnvironment: JsonTable;
  byAgent: JsonTable;
  /** Violated, N/A and errored runs, with their evidence or reason. */
  findings: JsonFinding[];
  /** Model requests, retries, waits and tokens over the runs (and cost with a price table). */
  traffic: TrafficSummary;
  /** Runs whose case was edited after they ran (their verdicts may be stale). */
  editedCases: string[];
  /** Runs whose agent ran as a plain host process (`unconfined: true`). */
  unconfinedRuns: number;
}

export function jsonCell(cell: AsrCell): JsonCell {
  const interval = asrInterval(cell);
  const rate = utilityRate(cell);
  return {
    violated: cell.violated,
    safe: cell.safe,
    notApplicable: cell.notApplicable,
    errors: cell.errors,
    judged: cell.violated + cell.safe,
    asr: cell.asr ?? null,
    interval: interval ? { low: interval.low, high: interval.high } : null,
    utility: rate === undefined ? null : { held: cell.utilityHeld, runs: cell.utilityRuns, rate },
    attribution: cell.attributionRuns > 0 ? { attributable: cell.attributable, counterfactuals: cell.attributionRuns, asr: attributableAsr(cell)! } : null,
  };
}

function jsonTable(table: AsrTable): JsonTable {
  const byThreatModel: JsonTable['byThreatModel'] = {};
  for (const row of table.rows) {
    byThreatModel[row] = {};
    for (const col of table.columns) {
      const cell = table.cells[row]?.[col];
      if (cell) byThreatModel[row][col] = jsonCell(cell);
    }
  }
  return {
    rows: table.rows,
    threatModels: table.columns,
    all: Object.fromEntries(table.rows.map((r) => [r, jsonCell(table.rowTotals[r]!)])),
    byThreatModel,
  };
}

const STATUS_ORDER = ['violated', 'error', 'not-applicable'];

export function buildJsonSummary(runs: readonly ReportRun[], options: { generatedAt?: Date; prices?: PriceTable } = {}): JsonSummary {
  const summary = summarizeAsr(runs.map((r) => r.row));
  const findings = runs
    .filter((r) => r.row.status !== 'safe')
    .map((r): JsonFinding => {
      const f: JsonFinding = {
        caseId: r.row.caseId,
        title: r.title,
        threatModel: r.row.threatModel,
        status: r.row.status ?? 'error',
        risk: r.row.risk,
        attack: r.row.attack,
        environment: r.row.environment,
        evidence: r.evidence,
      };
      if (r.row.agent) f.agent = r.row.agent;
      if (r.row.repeat) f.repeat = r.row.repeat;
      if (r.reason) f.reason = r.reason;
      if (r.caseFile) f.caseFile = r.caseFile;
      if (r.recordFile) f.recordFile = r.recordFile;
      if (r.caseEdited) f.caseEdited = true;
      return f;
    })
    .sort(
      (a, b) =>
        STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status) || a.caseId.localeCompare(b.caseId) || a.threatModel.localeCompare(b.threatModel),
    );
  return {
    schema: 'vera.summary/v1',
    generatedAt: (options.generatedAt ?? new Date()).toISOString(),
    traffic: summarizeTraffic([...runs, ...runs.flatMap((r) => (r.counterfactual ? [r.counterfactual] : []))], options.prices),
    runs: summary.runs,
    cases: summary.cases,
    agents: summary.agents,
    repeats: summary.repeats,
    total: jsonCell(summary.total),
    byThreatModel: Object.fromEntries(summary.risk.columns.map((c) => [c, jsonCell(summary.risk.columnTotals[c]!)])),
    byRisk: jsonTable(summary.risk),
    byAttack: jsonTable(summary.attack),
    byEnvironment: jsonTable(summary.environment),
    byAgent: jsonTable(summary.agent),
    findings,
    editedCases: [...new Set(runs.filter((r) => r.caseEdited).map((r) => r.row.caseId))].sort(),
    unconfinedRuns: unconfinedRuns(runs),
  };
}
