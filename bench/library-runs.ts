/**
 * Runs case suites against the embedded scripted policies, in process (reference agent over
 * in-memory MCP, the scripted model server on 127.0.0.1 at zero latency), and tallies what the
 * library's gates need: per case and threat model the status, utility in benign runs, and the
 * ASR by risk category and attack method. Shared by bench/library.ts and test/library.test.ts.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { referenceAgent } from '../adapters/reference-agent.js';
import { loadCaseSuite } from '../engine/case-loader.js';
import type { SafetyCase } from '../engine/case-schema.js';
import type { SafetyRecord } from '../engine/record-writer.js';
import { parseRecord } from '../engine/record-reader.js';
import { reverify } from '../reporters/records/replay.js';
import { runCase } from '../runner/run-case.js';
import { gateRunOf, type GateRun } from '../pipeline/compile/dry-run.js';
import { startScriptedModelServer } from '../testing/scripted-model-server.js';

/** One run as the gates read it (pipeline/compile/dry-run.ts), with the taxonomy the ASR tables group by. */
export interface LibraryRun extends GateRun {
  risk: string;
  attack: string;
  environment: string;
  /**
   * Set when the run's record, as written (redacted, through JSON, validated by the loader) and
   * judged again the way `vera replay` judges it, disagrees with the live verdict or utility.
   */
  replayMismatch?: string;
}

/** `vera replay` of a fresh record: the written form of `record`, re-verified; undefined when it agrees with the live run. */
export function replayMismatch(record: SafetyRecord, spec: SafetyCase): string | undefined {
  const stored = parseRecord(JSON.parse(JSON.stringify(record)));
  if (stored.kind !== 'record') return `the written record does not load: ${stored.kind === 'problem' ? stored.problem : 'not a record'}`;
  const again = reverify(stored.record, spec);
  const problems: string[] = [];
  if (again.verdict.status !== record.status) problems.push(`verdict ${record.status} → ${again.verdict.status}`);
  if (record.utility && again.utility !== record.utility.holds) problems.push(`utility ${record.utility.holds} → ${again.utility}`);
  return problems.length ? problems.join(', ') : undefined;
}

export async function suiteFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.case.yaml'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

export async function loadSuites(dir: string, files?: readonly string[]): Promise<SafetyCase[]> {
  const cases: SafetyCase[] = [];
  for (const file of files ?? (await suiteFiles(dir))) cases.push(...(await loadCaseSuite(file)).map((c) => c.spec));
  return cases;
}

/** Every (case, threat model) against one policy, `concurrency` at a time. */
export async function runLibrary(cases: readonly SafetyCase[], policy: 'naive' | 'guarded', options: { concurrency?: number } = {}): Promise<LibraryRun[]> {
  const server = await startScriptedModelServer({ policy, recordRequests: false });
  try {
    const agent = referenceAgent({ model: 'scripted', baseURL: server.url, apiKey: 'test', maxRetries: 0, mcpTransport: 'in-memory' });
    const jobs = cases.flatMap((spec) => spec.threatModels.map((threatModel) => ({ spec, threatModel })));
    const runs: LibraryRun[] = new Array(jobs.length);
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const i = next++;
        const { spec, threatModel } = jobs[i]!;
        const { record } = await runCase({ spec, threatModel, agent, recordDir: false });
        const mismatch = replayMismatch(record, spec);
        runs[i] = {
          ...gateRunOf(record),
          risk: spec.taxonomy.risk,
          attack: spec.taxonomy.attack,
          environment: spec.taxonomy.environment,
          ...(mismatch ? { replayMismatch: mismatch } : {}),
        };
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 32 }, worker));
    return runs;
  } finally {
    await server.close();
  }
}

export interface Rate {
  violated: number;
  runs: number;
}

/** Violated / runs over the adversarial runs (not benign), grouped by `key`. */
export function asrBy(runs: readonly LibraryRun[], key: (r: LibraryRun) => string): Map<string, Rate> {
  const out = new Map<string, Rate>();
  for (const r of runs) {
    if (r.threatModel === 'benign') continue;
    const k = key(r);
    const rate = out.get(k) ?? { violated: 0, runs: 0 };
    rate.runs++;
    if (r.status === 'violated') rate.violated++;
    out.set(k, rate);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

export const percent = (r: Rate) => (r.runs === 0 ? '—' : `${((100 * r.violated) / r.runs).toFixed(1)}%`);
