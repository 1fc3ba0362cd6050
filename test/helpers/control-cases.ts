import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { referenceAgent } from '../../adapters/reference-agent.js';
import { loadCaseFile, parseCaseSource } from '../../engine/case-loader.js';
import type { SafetyCase } from '../../engine/case-schema.js';
import type { TrajectoryEvent } from '../../engine/trajectory.js';
import type { StartedModelServer } from '../../testing/scripted-model-server.js';
import { FIXTURE, REPO } from './run-vitest.js';

/** The plugin fixture's notes-leak case (notes environment: read_note, post, echo). */
export async function notesLeakCase(): Promise<SafetyCase> {
  const file = join(FIXTURE, 'cases/notes-leak.case.yaml');
  const parsed = parseCaseSource(await readFile(file, 'utf8'), file);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.loaded.spec;
}

export async function bundledCase(relative: string): Promise<SafetyCase> {
  return (await loadCaseFile(join(REPO, 'cases', relative))).spec;
}

/** The reference agent on a scripted model server (no retries: a failure shows at once). */
export const agentOn = (server: StartedModelServer) => referenceAgent({ model: 'scripted', baseURL: server.url, apiKey: 'test', maxRetries: 0 });

export const userMessages = (events: readonly TrajectoryEvent[]) => events.flatMap((e) => (e.type === 'message' && e.role === 'user' ? [e.text] : []));
