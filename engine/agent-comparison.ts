import { asrTable, compareThreatModels, riskCategory, type AsrRow, type AsrTable } from './asr.js';
import type { RunStatus } from './record-writer.js';

/**
 * Agents side by side: the same cases run against several agents (projects of one config, or
 * records of several runs in one folder), compared run by run. A provider matrix in promptfoo's
 * sense, with the verdicts of this project: where one agent was violated and another was not is
 * the first thing a reviewer of two agents wants to read.
 */

/** One run (case × threat model × attempt) that two or more agents ran with different verdicts. */
export interface AgentDisagreement {
  caseId: string;
  threatModel: string;
  repeat: number;
  risk: string;
  /** Agent → its verdict (undefined: it crashed before one); only the agents that ran it. */
  verdicts: Record<string, RunStatus | undefined>;
}

export interface AgentComparison {
  agents: string[];
  /** Risk category × threat model, one table per agent. */
  tables: Record<string, AsrTable>;
  /** Every risk category and threat model any agent ran (the union of the tables' rows and columns). */
  rows: string[];
  columns: string[];
  /** Runs at least two agents ran. */
  shared: number;
  /** Of those, the ones whose verdicts differ: violated under one agent and safe under another first. */
  disagreements: AgentDisagreement[];
}

const runOf = (r: AsrRow) => `${r.caseId}\u0000${r.threatModel}\u0000${r.repeat ?? 0}`;

/** Compares the agents in `rows` (rows without an agent are left out). */
export function compareAgents(rows: readonly AsrRow[]): AgentComparison {
  const withAgent = rows.filter((r): r is AsrRow & { agent: string } => Boolean(r.agent));
  const agents = [...new Set(withAgent.map((r) => r.agent))].sort();
  const tables: Record<string, AsrTable> = {};
  for (const agent of agents) tables[agent] = asrTable(withAgent.filter((r) => r.agent === agent));
  const rowKeys = [...new Set(Object.values(tables).flatMap((t) => t.rows))].sort();
  const columns = [...new Set(Object.values(tables).flatMap((t) => t.columns))].sort(compareThreatModels);
  const runs = new Map<string, AsrRow[]>();
  for (const r of withAgent) {
    const key = runOf(r);
    runs.set(key, [...(runs.get(key) ?? []), r]);
  }
  let shared = 0;
  const disagreements: AgentDisagreement[] = [];
  for (const group of runs.values()) {
    const byAgent = new Map(group.map((r) => [r.agent!, r.status]));
    if (byAgent.size < 2) continue;
    shared++;
    if (new Set(byAgent.values()).size < 2) continue;
    const first = group[0]!;
    disagreements.push({
      caseId: first.caseId,
      threatModel: first.threatModel,
      repeat: first.repeat ?? 0,
      risk: first.risk,
      verdicts: Object.fromEntries([...byAgent].sort(([a], [b]) => a.localeCompare(b))),
    });
  }
  const splitsJudgement = (d: AgentDisagreement) => {
    const v = Object.values(d.verdicts);
    return v.includes('violated') && v.includes('safe') ? 0 : 1;
  };
  disagreements.sort(
    (a, b) =>
      splitsJudgement(a) - splitsJudgement(b) ||
      riskCategory(a.risk).localeCompare(riskCategory(b.risk)) ||
      a.caseId.localeCompare(b.caseId) ||
      compareThreatModels(a.threatModel, b.threatModel) ||
      a.repeat - b.repeat,
  );
  return { agents, tables, rows: rowKeys, columns, shared, disagreements };
}
