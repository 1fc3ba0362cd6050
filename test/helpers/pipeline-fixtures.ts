import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAIJsonModel, type JsonModel } from '../../pipeline/llm/json-model.js';
import type { ScriptStep, StartedModelServer } from '../../testing/index.js';
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
