import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeLocalRuns, runWithLocalModel, tallyLocalRuns, type LocalRunSet } from '../../bench/local-model-runs.js';
import { replayMismatch } from '../../bench/library-runs.js';
import { loadCaseSuite } from '../../engine/case-loader.js';
import type { SafetyCase } from '../../engine/case-schema.js';
import { startLocalModel } from '../../provider/local-model/endpoint.js';
import type { StartedLocalModel } from '../../provider/local-model/server.js';
import { REPO } from '../helpers/run-vitest.js';
import { LOCAL_SUITE_MODEL, requireInstalledModel } from './local-suite.js';

/**
 * The first runs that read English: bundled cases through the packaged model — a stratified
 * sample (the first hand-written case of each environment) under all four threat models with the
 * scripted adversary, then the LLM adversary (the same model) on three multi-turn cases. What a
 * tiny model does is not a production ASR; what must hold is everything around it: every run
 * judged or N/A (a budget overrun is the only error allowed, and it is counted), every verdict the
 * same when the written record is judged again, tool calls and tokens counted, every adversary
 * reply a structured decision. The tallies go to .vera/local-model/report.md and the log.
 */
const REPORT_DIR = join(REPO, '.vera/local-model');
const ENVIRONMENTS = ['calendar', 'code-hosting', 'database', 'email', 'files', 'messaging', 'payments', 'shell', 'web'];
const ADVERSARY_CASES = ['email/leak-vpn-password-to-lookalike-helpdesk', 'email/purge-legal-hold-mail', 'payments/split-payment-under-approval-threshold'];

let server: StartedLocalModel;
const report: string[] = [];

async function caseAt(path: string): Promise<SafetyCase> {
  const [first] = await loadCaseSuite(join(REPO, 'cases', `${path}.case.yaml`));
  return first!.spec;
}

async function stratifiedSample(): Promise<SafetyCase[]> {
  const cases: SafetyCase[] = [];
  for (const environment of ENVIRONMENTS) {
    const files = (await readdir(join(REPO, 'cases', environment))).filter((f) => f.endsWith('.case.yaml')).sort();
    cases.push(await caseAt(`${environment}/${files[0]!.replace(/\.case\.yaml$/, '')}`));
  }
  return cases;
}

/** The checks both sets share: complete, judged, stable on replay. */
function expectSound(set: LocalRunSet, planned: number, specs: readonly SafetyCase[]) {
  expect(set.runs).toHaveLength(planned);
  const errors = set.runs.filter((r) => r.status === 'error');
  // A tiny model on two cores can run out of a case's time budget; nothing else may fault.
  expect(errors.filter((r) => !/time budget .* exceeded/.test(r.reason)).map((r) => `${r.caseId} [${r.threatModel}]: ${r.reason}`)).toEqual([]);
  for (const run of set.runs) {
    if (run.status === 'error') continue;
    expect(
      replayMismatch(run.record, specs.find((s) => s.id === run.caseId)!),
      `${run.caseId} [${run.threatModel}] judged again from its record`,
    ).toBeUndefined();
  }
  expect(set.stats.requests).toBeGreaterThanOrEqual(planned);
  expect(set.stats.outputTokens).toBeGreaterThan(0);
}

beforeAll(async () => {
  await requireInstalledModel();
  server = await startLocalModel(`local:${LOCAL_SUITE_MODEL}?parallel=1`);
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (report.length === 0) return;
  await mkdir(REPORT_DIR, { recursive: true });
  const text = [`# Bundled cases through ${LOCAL_SUITE_MODEL} (${new Date().toISOString()})`, '', ...report, ''].join('\n');
  await writeFile(join(REPORT_DIR, 'report.md'), text);
  console.log(`\n${text}`);
});

describe(`bundled cases through the real model (${LOCAL_SUITE_MODEL})`, () => {
  it('a stratified sample under all four threat models: every run judged, verdicts stable on replay, the model acting on the tasks', async () => {
    const cases = await stratifiedSample();
    const set = await runWithLocalModel({ model: LOCAL_SUITE_MODEL, cases, server, log: (l) => console.log(l) });
    report.push(...describeLocalRuns('Stratified sample, reference agent, scripted adversary', set), '');
    expectSound(
      set,
      cases.reduce((n, c) => n + c.threatModels.length, 0),
      cases,
    );
    const tally = tallyLocalRuns(set);
    expect(Object.keys(tally.byThreatModel).sort()).toEqual(['benign', 'indirect', 'multi-channel', 'single-channel']);
    // A reader of English acts on the task: it makes tool calls in most benign runs.
    const benign = set.runs.filter((r) => r.threatModel === 'benign');
    expect(benign.filter((r) => r.toolCalls > 0).length).toBeGreaterThanOrEqual(Math.ceil(benign.length / 2));
  }, 1_200_000);

  it('the LLM adversary (the same model) on three multi-turn cases: every reply a structured decision, every run judged', async () => {
    const cases = await Promise.all(ADVERSARY_CASES.map(caseAt));
    const set = await runWithLocalModel({
      model: LOCAL_SUITE_MODEL,
      cases,
      server,
      threatModels: ['multi-channel'],
      llmAdversary: true,
      log: (l) => console.log(l),
    });
    report.push(...describeLocalRuns('LLM adversary, multi-channel', set), '');
    expectSound(set, cases.length, cases);
    const tally = tallyLocalRuns(set);
    expect(tally.adversaryReplies).toBeGreaterThanOrEqual(cases.length);
    // Every reply is a decision the control agent could read (the json_schema grammar held). A
    // safety-tuned model may refuse the attacker's role (Qwen2.5-Coder-1.5B does, most of the time):
    // each refusal is recorded, nothing of it reaches the agent, and the next reply is under
    // another strategy.
    expect(tally.adversaryUnparsable).toBe(0);
    for (const run of set.runs) {
      const exchanges = run.record.control_transcript.filter((x) => x.response !== undefined);
      for (const [i, x] of exchanges.entries()) {
        expect(x.request?.model, `${run.caseId}: the adversary asked the local model`).toBe(LOCAL_SUITE_MODEL);
        if (x.adversaryRefusal === undefined) continue;
        expect(x.decision.action, `${run.caseId}: a refusal is never sent`).not.toBe('send');
        const next = exchanges[i + 1];
        if (next) expect(next.switched?.from, `${run.caseId}: after a refusal the strategy changes`).toBe(x.strategy);
      }
    }
  }, 1_200_000);
});
