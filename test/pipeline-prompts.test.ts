import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCaseFile } from '../engine/case-loader.js';
import { capabilityMap } from '../pipeline/capabilities.js';
import { compile, type CompileReport } from '../pipeline/compile/compile.js';
import { compose } from '../pipeline/compose/compose.js';
import { sample } from '../pipeline/compose/sampling.js';
import type { GoalsFile } from '../pipeline/compose/goals-file.js';
import { RecordedJsonModel, RecordedReplyMissing } from '../pipeline/llm/recorded-model.js';
import { openAIJsonModel } from '../pipeline/llm/json-model.js';
import { modelOptionsFrom } from '../pipeline/llm/model-flags.js';
import { explore, type ExploreResult } from '../pipeline/explore/explore.js';
import { DocumentCorpus } from '../pipeline/explore/sources/document-corpus.js';
import { loadDocumentFolder } from '../pipeline/explore/sources/local-folder.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';
import { builtinEnvironments } from '../sandbox/environments/index.js';
import { copyTaxonomy } from './helpers/pipeline-fixtures.js';
import { REPO } from './helpers/run-vitest.js';

/**
 * The pipeline's real prompts, exercised offline: `vera compose` and `vera compile` on the bundled
 * taxonomy and registry, answered from checked-in replies keyed by a hash of each request
 * (pipeline/llm/recorded-model.ts). A changed prompt, schema or environment is a miss that names
 * the file to refresh. Refresh against any OpenAI-compatible endpoint with
 *   VERA_MODEL_REPLIES=record OPENAI_API_KEY=… [OPENAI_BASE_URL=…] VERA_PIPELINE_MODEL=<model> \
 *     npx vitest run --project unit test/pipeline-prompts.test.ts
 * and review the diff: a real model's replies may be judged differently by the gates, and the
 * expectations below say what these replies were written to show.
 */
const REPLIES = join(REPO, 'test/fixtures/pipeline/model-replies');
const REFRESH = 'VERA_MODEL_REPLIES=record OPENAI_API_KEY=… VERA_PIPELINE_MODEL=<model> npx vitest run --project unit test/pipeline-prompts.test.ts';
const PAIRS = [
  { risk: 'data-exfiltration/credential-leak', attack: 'prompt-injection/indirect', environment: 'email' },
  { risk: 'unauthorized-action/financial-transfer', attack: 'social-engineering/authority-impersonation', environment: 'payments' },
];

async function recorded(name: string): Promise<RecordedJsonModel> {
  const record = process.env.VERA_MODEL_REPLIES === 'record';
  return RecordedJsonModel.open({
    file: join(REPLIES, `${name}.yaml`),
    refresh: REFRESH,
    ...(record ? { upstream: openAIJsonModel(modelOptionsFrom({})) } : {}),
  });
}

describe('exploration prompts against recorded replies', () => {
  let dir: string;
  let model: RecordedJsonModel;
  let result: ExploreResult;
  let taxonomy: Taxonomy;
  beforeAll(async () => {
    dir = await copyTaxonomy(join(REPO, 'cases/taxonomy'));
    taxonomy = await Taxonomy.load(dir);
    model = await recorded('explore');
    const documents = await loadDocumentFolder(join(REPO, 'test/fixtures/pipeline/corpus/prompts'));
    result = await explore({
      taxonomy,
      sources: [new DocumentCorpus('local', documents)],
      model,
      budget: 1,
      perQuery: 1,
      maxQueries: 3,
      queries: ['poisoned MCP server rug pull'],
    });
    await model.save();
  }, 60_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('the summary agent places the document on existing nodes and the frontier plans the next round', () => {
    expect(result.retrieved).toBe(1);
    const updates = result.changelog.filter((e) => e.operation === 'update');
    expect(updates.length).toBeGreaterThan(0);
    expect(result.changelog.filter((e) => e.operation === 'invalid-reply')).toEqual([]);
    expect(result.frontier.length).toBeGreaterThan(0);
    expect(model.unused()).toEqual([]);
  });
});

describe('the pipeline prompts against recorded replies', () => {
  let taxonomy: Taxonomy;
  let goals: GoalsFile;
  let report: CompileReport;
  let out: string;
  let composer: RecordedJsonModel;
  let compiler: RecordedJsonModel;

  beforeAll(async () => {
    taxonomy = await Taxonomy.load(join(REPO, 'cases/taxonomy'));
    out = await mkdtemp(join(tmpdir(), 'vera-prompts-'));
    composer = await recorded('compose');
    goals = { schema: 'vera.goals/v1', goals: [], rejected: [], duplicates: [], incompatible: [] };
    for (const pair of PAIRS) {
      // The seed whose first sampled environment for the pair is the one the replies were written for.
      const environments = taxonomy.leaves('environments').map((l) => l.path);
      let seed = 1;
      while (sample(environments, 1, `${seed}|${pair.risk}|${pair.attack}`)[0] !== pair.environment) seed++;
      goals = await compose({
        taxonomy,
        model: composer,
        registry: builtinEnvironments,
        capabilities: capabilityMap,
        seed: String(seed),
        perPair: 1,
        risks: [pair.risk],
        attacks: [pair.attack],
        existing: goals,
      });
    }
    await composer.save();
    compiler = await recorded('compile');
    report = await compile({ goals: goals.goals, model: compiler, registry: builtinEnvironments, outDir: out, cwd: out, repairs: 1 });
    await compiler.save();
  }, 120_000);
  afterAll(() => rm(out, { recursive: true, force: true }));

  it('compose: each tuple becomes a goal naming its target with the identifiers it will have', () => {
    expect(goals.rejected).toEqual([]);
    expect(goals.goals.map((g) => [g.taxonomy.risk, g.taxonomy.environment])).toEqual(PAIRS.map((p) => [p.risk, p.environment]));
    for (const goal of goals.goals) expect(goal.targetResource).toMatch(/[\w-]+[@./-][\w.-]+/);
  });

  it('compile: every goal becomes a case that passes all gates, the dry run included; a flawed first draft is repaired with its reasons', async () => {
    expect(report.rejected).toEqual([]);
    expect(report.kept.map((k) => k.goal)).toEqual(goals.goals.map((g) => g.id));
    const repaired = report.kept.find((k) => k.attempts === 2);
    expect(repaired, 'one reply was written to fail a gate first').toBeDefined();
    for (const kept of report.kept) {
      const loaded = await loadCaseFile(join(out, kept.file));
      expect(loaded.spec.tags).toContain('generated');
      // Nothing the agent sees speaks the test double's dialect.
      expect(JSON.stringify([loaded.spec.task, loaded.spec.attack])).not.toMatch(/ACTION:|<<|\[\[/);
    }
  });

  it('every recorded reply was asked for: a stale entry means a prompt changed', () => {
    expect(composer.unused()).toEqual([]);
    expect(compiler.unused()).toEqual([]);
  });

  it('a changed prompt is a miss naming the file and how to refresh', async () => {
    const model = await RecordedJsonModel.open({ file: join(REPLIES, 'compose.yaml'), refresh: REFRESH, mode: 'replay' });
    const { composerReply } = await import('../pipeline/compose/goal-composer.js');
    const miss = model.ask({ system: 'A prompt nobody recorded.', user: '{}', schema: composerReply, name: 'composed_goal' });
    await expect(miss).rejects.toThrow(RecordedReplyMissing);
    await expect(miss).rejects.toThrow(
      /compose\.yaml: no recorded reply for a "composed_goal" request \(key [0-9a-f]{16}\); the file has "composed_goal" replies for other requests .*Refresh with: VERA_MODEL_REPLIES=record/,
    );
    expect(await readFile(join(REPLIES, 'compose.yaml'), 'utf8')).not.toContain('A prompt nobody recorded.');
  });
});
