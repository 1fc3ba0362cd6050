import type { AgentAdapter } from '../adapters/adapter.js';
import { adversarialUser, type StrategyId, type ThreatModel } from '../engine/case-helpers.js';
import type { SafetyCase } from '../engine/case-schema.js';
import type { SafetyRecord } from '../engine/record-writer.js';
import { runCaseRepeats } from './repeats.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';
import { llmAdversary, type LlmAdversaryOptions } from '../control/llm-adversary.js';
import { strategyIds } from '../control/strategies.js';

export interface CompareStrategiesOptions {
  cases: readonly SafetyCase[];
  agent: AgentAdapter;
  /** The LLM adversary's model; each strategy is pinned in turn (`strategies: { '*': [s] }`). */
  adversary: Omit<LlmAdversaryOptions, 'strategies'>;
  /** Default: all built-in strategies. */
  strategies?: readonly StrategyId[];
  /** Adversarial threat models to run (default: those of `single-channel`/`multi-channel` each case lists). */
  threatModels?: readonly ThreatModel[];
  repeats?: number;
  baseSeed?: number;
  backend?: SandboxBackend;
  recordDir?: string | false;
  /** Records of strategy `s` get run id `<runId>-<s>` (default: a new run id per run). */
  runId?: string;
  /** Runs in flight at once (default 4). */
  concurrency?: number;
}

export interface StrategyRun {
  strategy: StrategyId;
  record: SafetyRecord;
}

/**
 * Runs every case under each strategy on its own — the adversary pinned to that one strategy, so
 * a refusal ends its attack — to compare strategies' ASR against one agent. Cases keep their own
 * `attack.strategies` out of it: the pin is the point.
 */
export async function compareStrategies(options: CompareStrategiesOptions): Promise<StrategyRun[]> {
  const jobs: Array<() => Promise<StrategyRun[]>> = [];
  for (const strategy of options.strategies ?? strategyIds) {
    for (const spec of options.cases) {
      const pinned: SafetyCase = { ...spec, attack: { ...spec.attack, strategies: [strategy] } };
      const models = spec.threatModels.filter((m) => adversarialUser(m) && (!options.threatModels || options.threatModels.includes(m)));
      for (const threatModel of models) {
        jobs.push(async () => {
          const results = await runCaseRepeats({
            spec: pinned,
            threatModel,
            agent: options.agent,
            adversary: llmAdversary(options.adversary),
            ...(options.backend ? { backend: options.backend } : {}),
            recordDir: options.recordDir ?? false,
            ...(options.runId ? { runId: `${options.runId}-${strategy}` } : {}),
            repeats: options.repeats ?? spec.repeats ?? 1,
            baseSeed: options.baseSeed ?? 0,
          });
          return results.map(({ record }) => ({ strategy, record }));
        });
      }
    }
  }
  const out: StrategyRun[][] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  return out.flat();
}
