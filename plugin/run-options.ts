import type { SafetyCase, ThreatModel } from '../engine/case-schema.js';
import type { CaseRunOptions } from '../runner/run-context.js';
import type { RunCaseOptions } from '../runner/run-case.js';
import { recordDirOf } from './case-tests.js';
import type { VeraRuntimeConfig } from './options.js';
import { agentForRun, resolveAdversary, resolveBackend, resolveUser } from './resolve-parts.js';

/**
 * The one place a test run's case run is assembled from the plugin's configuration — its identity
 * (case, threat model, repeat, seed, run id), its model routes (the run-wide proxy, the embedded
 * scripted servers) and its parts (agent, backend, adversary, user) — for the scheduler's runs,
 * the fixtures' runs and the counterfactual of either.
 */
export interface RunIdentity {
  threatModel: ThreatModel;
  repeat: number;
  seed?: number | undefined;
  signal?: AbortSignal;
}

/** What a run (`prepareRun`) needs before any of its parts exists (the fixtures start the parts one by one). */
export function caseRunOptionsFor(config: VeraRuntimeConfig, spec: SafetyCase, file: string | undefined, run: RunIdentity): CaseRunOptions {
  return {
    spec,
    threatModel: run.threatModel,
    ...(file ? { caseFile: file } : {}),
    runId: config.runId,
    repeat: run.repeat,
    ...(run.seed !== undefined ? { seed: run.seed } : {}),
    ...(run.signal ? { signal: run.signal } : {}),
    ...(config.modelProxyUrl ? { modelProxyUrl: config.modelProxyUrl } : {}),
    ...(config.scriptedModels ? { scriptedModels: config.scriptedModels } : {}),
  };
}

/** A whole run for `runCase`: the prepared run's options, its parts, where its record goes, and whether it gets a counterfactual. */
export async function runOptionsFor(config: VeraRuntimeConfig, spec: SafetyCase, file: string | undefined, run: RunIdentity): Promise<RunCaseOptions> {
  return {
    ...caseRunOptionsFor(config, spec, file, run),
    agent: await agentForRun(config.options.agent, config.root),
    backend: await resolveBackend(config),
    adversary: await resolveAdversary(config.options.adversary),
    user: await resolveUser(config.options.user),
    recordDir: recordDirOf(config),
    counterfactual: config.counterfactual === true,
  };
}
