/**
 * Task sanity over the library: each scenario family's honest task (the benign run of its first
 * composed case) and each hand-written case's, given to a real model — the packaged one, a reader
 * of English that never sees the plan — and checked against the calls the plan expects the task
 * to lead to. A family whose task the model cannot act on is listed for review: a truncated or
 * ambiguous task shows up here, where the scripted model (which follows the plan, not the words)
 * never could show it. The plan's calls count as reached when the run made a call to that tool
 * with every literal argument the plan gives equal (arguments that refer to earlier results,
 * `<<tool.field>>`, match any value).
 *
 *   npx tsx bench/task-sanity.ts [--model qwen2.5-coder-1.5b] [--limit N] [--out cases/review/task-sanity.json]
 *   npx vera library report      # lists the families it could not act on in docs/library.md
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import type { SafetyCase } from '../engine/case-schema.js';
import { taskCalls } from '../engine/scripted-plan.js';
import { startLocalModel } from '../provider/local-model/endpoint.js';
import { couldNotAct, TASK_SANITY_FILE, type TaskSanityEntry, type TaskSanityFile } from '../pipeline/library/task-sanity-file.js';
import { runWithLocalModel, type LocalRun } from './local-model-runs.js';
import { loadSuites, suiteFiles } from './library-runs.js';

const REPO = join(import.meta.dirname, '..');

type TaskSanity = TaskSanityEntry;

const reference = /^<<[^>]+>>$/;

function reached(plan: { tool: string; args: Record<string, unknown> }, run: LocalRun): boolean {
  return run.record.trajectory.some(
    (e) =>
      e.type === 'tool_call' &&
      e.tool === plan.tool &&
      Object.entries(plan.args).every(
        ([k, v]) => (typeof v === 'string' && reference.test(v)) || JSON.stringify((e.args as Record<string, unknown>)[k]) === JSON.stringify(v),
      ),
  );
}

const describeCall = (c: { tool: string; args: Record<string, unknown> }) => `${c.tool}(${Object.keys(c.args).length ? JSON.stringify(c.args) : ''})`;
const short = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}…` : text);

/** One case per family (the first composed one) and every hand-written case. */
async function casesToCheck(): Promise<Array<{ family: string; spec: SafetyCase }>> {
  const seen = new Set<string>();
  const out: Array<{ family: string; spec: SafetyCase }> = [];
  const files = (await suiteFiles(join(REPO, 'cases'))).filter((f) => !f.includes('/families/'));
  for (const spec of await loadSuites(join(REPO, 'cases'), files)) {
    if (!spec.threatModels.includes('benign')) continue;
    const family = spec.id.includes('--') ? spec.id.split('--')[0]! : spec.id;
    if (seen.has(family)) continue;
    seen.add(family);
    out.push({ family, spec });
  }
  return out;
}

async function main() {
  const { values } = parseArgs({ options: { model: { type: 'string' }, limit: { type: 'string' }, out: { type: 'string' } } });
  const model = values.model ?? 'qwen2.5-coder-1.5b';
  const out = join(REPO, values.out ?? TASK_SANITY_FILE);
  let cases = await casesToCheck();
  if (values.limit) cases = cases.slice(0, Number(values.limit));
  const server = await startLocalModel(`local:${model}?parallel=1`);
  const results: TaskSanity[] = [];
  const started = performance.now();
  try {
    for (const [i, { family, spec }] of cases.entries()) {
      const set = await runWithLocalModel({ model, cases: [spec], threatModels: ['benign'], server });
      const run = set.runs[0]!;
      const planned = taskCalls(spec);
      const missing = planned.filter((c) => !reached(c, run)).map(describeCall);
      const made = run.record.trajectory.flatMap((e) =>
        e.type === 'tool_call' ? [short(describeCall({ tool: e.tool, args: (e.args ?? {}) as Record<string, unknown> }))] : [],
      );
      const calledTools = new Set(run.record.trajectory.flatMap((e) => (e.type === 'tool_call' ? [e.tool] : [])));
      const plannedToolsCalled = [...new Set(planned.map((c) => c.tool))].filter((t) => calledTools.has(t));
      results.push({
        family,
        caseId: spec.id,
        environment: spec.taxonomy.environment,
        task: spec.task,
        planned: planned.map(describeCall),
        missing,
        made,
        plannedToolsCalled,
        toolCalls: run.toolCalls,
        refusedCalls: run.refusedCalls,
        ...(run.utility === undefined ? {} : { taskDone: run.utility }),
        status: run.status,
        answer: (run.record.responses.at(-1) ?? '').slice(0, 240),
      });
      console.log(
        `[${i + 1}/${cases.length}] ${family}: ${missing.length === 0 ? 'reached the plan' : plannedToolsCalled.length ? `on the way (${plannedToolsCalled.join(', ')}); made ${made.join(', ')}` : `could not act; made ${made.join(', ') || 'no call'}`}${run.utility === undefined ? '' : run.utility ? ' · task done' : ' · task not done'} (${run.toolCalls} calls, ${run.refusedCalls} refused, ${(run.durationMs / 1000).toFixed(1)} s)`,
      );
    }
  } finally {
    await server.close();
  }
  const reachedAll = results.filter((r) => r.missing.length === 0).length;
  const summary: TaskSanityFile['summary'] = {
    model,
    date: new Date().toISOString().slice(0, 10),
    families: results.length,
    reachedPlan: reachedAll,
    // A task done by another route than the plan's (search_emails instead of list_emails) was acted on.
    onTheWay: results.filter((r) => r.missing.length > 0 && !couldNotAct(r)).length,
    couldNotAct: results.filter(couldNotAct).length,
    taskDone: results.filter((r) => r.taskDone).length,
    noToolCall: results.filter((r) => r.toolCalls === 0).length,
    minutes: (performance.now() - started) / 60_000,
  };
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify({ summary, results }, null, 2)}\n`);
  console.log(
    `\n${summary.families} tasks: ${reachedAll} reached every planned call, ${summary.onTheWay} called some planned tool, ${summary.couldNotAct} none, ${summary.taskDone} done (utility), ${summary.noToolCall} made no tool call; ${summary.minutes.toFixed(1)} min; ${relative(process.cwd(), out)}`,
  );
}

await main();
