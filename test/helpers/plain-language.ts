/**
 * What test/plain-language.test.ts and test/plain-language-codex.test.ts share: the bundled cases they
 * run, every text a request shows the model, and the scripted model's plan syntax that none may carry.
 */
import { readdir } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { AgentAdapter } from '../../adapters/adapter.js';
import { loadCaseSuite } from '../../engine/case-loader.js';
import type { SafetyCase, ThreatModel } from '../../engine/case-schema.js';
import { runCase } from '../../runner/run-case.js';
import { afterAll, beforeAll } from 'vitest';
import { startScriptedModelServer, type RecordedRequest, type StartedModelServer } from '../../testing/scripted-model-server.js';
import { REPO } from './run-vitest.js';

/** Test-double syntax: an ACTION directive, or a data reference into an earlier tool result. */
export const PLAN_SYNTAX = /ACTION:\s*[A-Za-z_]|<<\s*[A-Za-z0-9_-]+\s*(?:[.[]|>>)/;

/**
 * The hand-written cases and, of the composed library, one case per attack method (the first in
 * file order): every renderer's text goes over the wire. test/library.test.ts checks the text of
 * every library case without running it here.
 */
export async function bundledCases(): Promise<SafetyCase[]> {
  const out: SafetyCase[] = [];
  const methods = new Set<string>();
  const entries = (await readdir(join(REPO, 'cases'), { recursive: true, withFileTypes: true })).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  );
  for (const entry of entries) {
    if (!entry.isFile() || !/\.case\.ya?ml$/.test(entry.name)) continue;
    const specs = (await loadCaseSuite(join(entry.parentPath, entry.name))).map((c) => c.spec);
    if (!entry.parentPath.includes(`${sep}bench`)) out.push(...specs);
    else for (const spec of specs) if (!methods.has(spec.taxonomy.attack)) out.push(spec), methods.add(spec.taxonomy.attack);
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/** Every piece of text a request shows the model: messages of every role, tool names and descriptions. */
function agentVisibleTexts(request: RecordedRequest): string[] {
  const c = request.conversation;
  if (!c) return [];
  return [
    ...c.messages.map((m) => m.text),
    ...c.messages.flatMap((m) => (m.toolCalls ?? []).map((t) => JSON.stringify(t.arguments))),
    ...c.tools.map((t) => `${t.name} ${t.description ?? ''}`),
  ];
}

export function offending(requests: readonly RecordedRequest[]): string[] {
  return requests.flatMap((r) =>
    agentVisibleTexts(r)
      .filter((t) => PLAN_SYNTAX.test(t))
      .map((t) => `${r.path}: ${t.slice(0, 200)}`),
  );
}

export async function runAll(cases: readonly SafetyCase[], server: StartedModelServer, agent: (server: StartedModelServer) => AgentAdapter) {
  const statuses: Array<{ id: string; threatModel: ThreatModel; status: string; error?: string }> = [];
  for (const spec of cases) {
    for (const threatModel of spec.threatModels) {
      const { record } = await runCase({ spec, threatModel, agent: agent(server), recordDir: false });
      statuses.push({ id: spec.id, threatModel, status: record.status, ...(record.error ? { error: record.error.message } : {}) });
    }
  }
  return statuses;
}

/**
 * A plain-language test file's hooks: the bundled cases loaded before its tests, and every scripted
 * model server a test starts closed after them.
 */
export function plainLanguageSuite(): { cases: () => SafetyCase[]; server: (policy: 'naive' | 'guarded') => Promise<StartedModelServer> } {
  let cases: SafetyCase[] = [];
  const servers: StartedModelServer[] = [];
  beforeAll(async () => {
    cases = await bundledCases();
  });
  afterAll(() => Promise.all(servers.map((s) => s.close())));
  return {
    cases: () => cases,
    server: async (policy) => {
      const server = await startScriptedModelServer({ policy });
      servers.push(server);
      return server;
    },
  };
}
