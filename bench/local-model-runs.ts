/**
 * Bundled cases through a real (small, local) model: the reference agent on the packaged model
 * (`vera install-model`), the scripted or the LLM adversary, in process, one run at a time (the
 * model serves one request at a time on this machine). Tallies what the runs did — verdicts,
 * utility, how many tool calls the model made and how many the tools refused, how many adversary
 * replies were usable — and what the model cost: tokens, generation time, tokens/s. Shared by
 * test/local-model/ (CI's bounded real-model suite) and bench/local-model.ts (the figures in
 * docs/performance.md).
 */
import { referenceAgent } from '../adapters/reference-agent.js';
import { llmAdversary } from '../control/llm-adversary.js';
import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import type { SafetyRecord } from '../engine/record-writer.js';
import { startLocalModel } from '../provider/local-model/endpoint.js';
import type { LocalModelStats, StartedLocalModel } from '../provider/local-model/server.js';
import { runCase } from '../runner/run-case.js';

export interface LocalRun {
  caseId: string;
  environment: string;
  threatModel: ThreatModel;
  status: SafetyRecord['status'];
  /** Why (the verdict's reason, or the fault). */
  reason: string;
  utility: boolean | undefined;
  toolCalls: number;
  /** Calls the tools answered with an error (an unknown id, a bad argument): the model's mistakes. */
  refusedCalls: number;
  /** Adversary replies (LLM adversary only): all of them, the ones where the model refused the attacker's role, and the ones that were no decision at all (not a JSON object). */
  adversaryReplies: number;
  adversaryRefusals: number;
  adversaryUnparsable: number;
  durationMs: number;
  record: SafetyRecord;
}

export interface LocalRunSet {
  model: string;
  runs: LocalRun[];
  /** The model server's counters over the set (requests, tokens, generation time). */
  stats: LocalModelStats;
  wallMs: number;
}

export interface LocalRunOptions {
  /** Which model (`vera install-model <name>`). */
  model: string;
  cases: readonly SafetyCase[];
  threatModels?: readonly ThreatModel[];
  /** Play the hostile user with the same local model instead of the scripted adversary. */
  llmAdversary?: boolean;
  /** A server already started (shared across sets); else one is started and closed. */
  server?: StartedLocalModel;
  log?: (line: string) => void;
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

const delta = (after: LocalModelStats, before: LocalModelStats): LocalModelStats => ({
  requests: after.requests - before.requests,
  queued: after.queued - before.queued,
  waiting: after.waiting,
  inputTokens: after.inputTokens - before.inputTokens,
  cachedTokens: after.cachedTokens - before.cachedTokens,
  outputTokens: after.outputTokens - before.outputTokens,
  generationMs: after.generationMs - before.generationMs,
  invalidReplies: after.invalidReplies - before.invalidReplies,
});

export async function runWithLocalModel(options: LocalRunOptions): Promise<LocalRunSet> {
  const server = options.server ?? (await startLocalModel(`local:${options.model}`));
  const before = server.stats();
  const started = performance.now();
  try {
    const agent = referenceAgent({ model: options.model, baseURL: server.url, apiKey: 'none', maxRetries: 0, mcpTransport: 'in-memory' });
    const adversary = options.llmAdversary ? llmAdversary({ model: options.model, baseURL: server.url, apiKey: 'none', maxRetries: 0 }) : undefined;
    const runs: LocalRun[] = [];
    for (const spec of options.cases) {
      for (const threatModel of spec.threatModels.filter((t) => !options.threatModels || options.threatModels.includes(t))) {
        const { record } = await runCase({ spec, threatModel, agent, recordDir: false, ...(adversary ? { adversary } : {}) });
        const calls = record.trajectory.filter((e) => e.type === 'tool_call');
        const exchanges = record.control_transcript.filter((x) => x.response !== undefined);
        const run: LocalRun = {
          caseId: spec.id,
          environment: spec.taxonomy.environment,
          threatModel,
          status: record.status,
          reason: record.error?.message ?? record.verdict.reason ?? record.verdict.evidence[0]?.message ?? '',
          utility: record.utility?.holds,
          toolCalls: calls.length,
          refusedCalls: calls.filter((c) => c.type === 'tool_call' && c.isError).length,
          adversaryReplies: options.llmAdversary ? exchanges.length : 0,
          adversaryRefusals: options.llmAdversary ? exchanges.filter((x) => x.adversaryRefusal !== undefined).length : 0,
          adversaryUnparsable: options.llmAdversary ? exchanges.filter((x) => !isJsonObject(x.response!.content)).length : 0,
          durationMs: record.durationMs,
          record,
        };
        runs.push(run);
        options.log?.(
          `${spec.id} [${threatModel}] ${run.status}${run.utility === undefined ? '' : run.utility ? ', task done' : ', task not done'} — ${run.toolCalls} calls (${run.refusedCalls} refused), ${(run.durationMs / 1000).toFixed(1)} s${run.reason ? ` — ${run.reason.slice(0, 140)}` : ''}${run.toolCalls === 0 ? ` — it answered: ${JSON.stringify((record.responses.at(-1) ?? '').slice(0, 140))}` : ''}`,
        );
      }
    }
    return { model: options.model, runs, stats: delta(server.stats(), before), wallMs: performance.now() - started };
  } finally {
    if (!options.server) await server.close();
  }
}

/** Counts by status, overall and per threat model; tool-call and adversary-reply figures. */
export function tallyLocalRuns(set: LocalRunSet) {
  const statuses = ['violated', 'safe', 'not-applicable', 'error'] as const;
  const count = (runs: readonly LocalRun[]) =>
    Object.fromEntries(statuses.map((s) => [s, runs.filter((r) => r.status === s).length])) as Record<(typeof statuses)[number], number>;
  const threatModels = [...new Set(set.runs.map((r) => r.threatModel))];
  const calls = set.runs.reduce((n, r) => n + r.toolCalls, 0);
  const refused = set.runs.reduce((n, r) => n + r.refusedCalls, 0);
  const benign = set.runs.filter((r) => r.threatModel === 'benign');
  return {
    runs: set.runs.length,
    all: count(set.runs),
    byThreatModel: Object.fromEntries(threatModels.map((t) => [t, count(set.runs.filter((r) => r.threatModel === t))])),
    benignTaskDone: `${benign.filter((r) => r.utility).length}/${benign.length}`,
    toolCalls: calls,
    refusedCalls: refused,
    adversaryReplies: set.runs.reduce((n, r) => n + r.adversaryReplies, 0),
    adversaryRefusals: set.runs.reduce((n, r) => n + r.adversaryRefusals, 0),
    adversaryUnparsable: set.runs.reduce((n, r) => n + r.adversaryUnparsable, 0),
    requests: set.stats.requests,
    tokens: { input: set.stats.inputTokens, cached: set.stats.cachedTokens, output: set.stats.outputTokens },
    outputTokensPerSecond: set.stats.generationMs > 0 ? set.stats.outputTokens / (set.stats.generationMs / 1000) : 0,
    runsPerMinute: set.wallMs > 0 ? set.runs.length / (set.wallMs / 60_000) : 0,
  };
}

/** The tally as Markdown lines (the suite prints it; the docs quote it). */
export function describeLocalRuns(title: string, set: LocalRunSet): string[] {
  const t = tallyLocalRuns(set);
  const row = (c: Record<string, number>) => `${c.violated} violated · ${c.safe} safe · ${c['not-applicable']} N/A · ${c.error} error`;
  return [
    `### ${title} (${set.model}, ${t.runs} runs, ${(set.wallMs / 60_000).toFixed(1)} min)`,
    `- all: ${row(t.all)}`,
    ...Object.entries(t.byThreatModel).map(([tm, c]) => `- ${tm}: ${row(c)}`),
    `- benign runs whose task was done: ${t.benignTaskDone}`,
    `- tool calls the model made: ${t.toolCalls}, of which the tools refused ${t.refusedCalls} (unknown ids, bad arguments)`,
    ...(t.adversaryReplies
      ? [
          `- adversary replies: ${t.adversaryReplies}, of which the model refused the attacker's role in ${t.adversaryRefusals} and ${t.adversaryUnparsable} were not a JSON object`,
        ]
      : []),
    `- replies held to a grammar (tool calls, json_schema) that ran out of tokens before the JSON closed: ${set.stats.invalidReplies} of ${t.requests}`,
    `- model: ${t.requests} requests, ${t.tokens.input} input tokens (${t.tokens.cached} cached), ${t.tokens.output} output tokens, ${t.outputTokensPerSecond.toFixed(1)} output tokens/s; ${t.runsPerMinute.toFixed(1)} runs/min`,
  ];
}
