import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { CliIO } from '../../cli/main.js';
import { openAIJsonModel, type JsonModel } from '../../pipeline/llm/json-model.js';
import { Taxonomy } from '../../pipeline/taxonomy/taxonomy.js';
import { startScriptedModelServer, type ScriptStep, type StartedModelServer } from '../../testing/index.js';
import { REPO } from './run-vitest.js';

/** Fixtures and script helpers shared by the pipeline tests (test/pipeline-*.test.ts). */
export const PIPELINE_FIXTURES = join(REPO, 'test/fixtures/pipeline');
export const FIXTURE_TAXONOMY = join(PIPELINE_FIXTURES, 'taxonomy');
export const CORPUS = join(PIPELINE_FIXTURES, 'corpus');

/** A scratch copy of a taxonomy directory (the tests write trees into it). */
export async function copyTaxonomy(from = FIXTURE_TAXONOMY): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vera-taxonomy-'));
  await cp(from, dir, { recursive: true });
  return dir;
}

/** One scripted model reply carrying `value` as JSON, optionally guarded by the request's user message. */
export function jsonStep(value: unknown, lastUser?: string): ScriptStep {
  return { ...(lastUser ? { expect: { lastUser } } : {}), reply: { text: JSON.stringify(value) } };
}

export function modelFor(server: StartedModelServer): JsonModel {
  return openAIJsonModel({ model: 'scripted', baseURL: server.url, apiKey: 'test', maxRetries: 0 });
}

/** The user message of every request the server received, in order. */
export function userMessages(server: StartedModelServer): string[] {
  return server.requests.map((r) => r.conversation?.messages.filter((m) => m.role === 'user').at(-1)?.text ?? '');
}

/**
 * Scripted model servers and scratch directories for one test file, closed and removed after
 * each test: call once at the top of the file.
 */
export function pipelineScratch() {
  const servers: StartedModelServer[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });
  return {
    async server(script: ScriptStep[]): Promise<StartedModelServer> {
      const s = await startScriptedModelServer({ script });
      servers.push(s);
      return s;
    },
    /** A scratch copy of the fixture taxonomy, loaded. */
    async scratchTaxonomy(): Promise<{ dir: string; taxonomy: Taxonomy }> {
      const dir = await copyTaxonomy();
      dirs.push(dir);
      return { dir, taxonomy: await Taxonomy.load(dir) };
    },
    /** A scratch directory under the system temp folder. */
    async scratch(prefix: string): Promise<string> {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    /** A scratch folder holding `files` (relative path → text). */
    async folder(files: Record<string, string>, prefix = 'vera-docs-'): Promise<string> {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      for (const [name, text] of Object.entries(files)) {
        await mkdir(join(dir, name, '..'), { recursive: true });
        await writeFile(join(dir, name), text);
      }
      return dir;
    },
  };
}

/**
 * A user project under the repository (so `vitest` and the plugin resolve) that runs its
 * `cases/**` with the reference agent on the embedded naive model: where generated cases are run.
 */
export async function writePluginProject(project: string): Promise<void> {
  await writeFile(
    join(project, 'vitest.config.ts'),
    [
      "import { defineConfig } from 'vitest/config';",
      "import { vera } from '../../../../plugin/index.js';",
      'export default defineConfig({',
      "  plugins: [vera({ include: ['cases/**/*.case.yaml'], agent: { type: 'reference', model: 'scripted', baseURL: 'scripted:naive' }, recordDir: process.env.FIXTURE_RECORDS })],",
      '  test: { include: [] },',
      '});',
      '',
    ].join('\n'),
  );
  await mkdir(join(project, 'cases'), { recursive: true });
}

/** A CLI io that keeps what the command printed. */
export function capturingIO(cwd = REPO): CliIO & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), cwd };
}
