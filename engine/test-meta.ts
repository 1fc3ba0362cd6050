import type { ThreatModel } from './case-helpers.js';
import type { ProviderStats, RunStatus } from './record-schema.js';

/**
 * What each test carries in `task.meta.vera` for reporters: plain JSON, so it survives the
 * worker→main boundary and `--reporter=blob` + `--merge-reports`. The plugin writes it
 * (plugin/meta-from-record.ts); reporters read it — so it lives below both.
 */
export interface VeraTestMeta {
  caseId: string;
  title: string;
  file: string;
  risk: string;
  attack: string;
  environment: string;
  threatModel: ThreatModel;
  /** Which repeat of the case (0-based; the record file has `--r<repeat>` when > 0). */
  repeat?: number;
  /** This repeat's seed (engine/seed.ts). */
  seed?: number;
  /** Strategies the control agent used, in order of first use (LLM adversary: its plan as it went). */
  strategies?: string[];
  /** Why the conversation ended (goal reached, turn budget, attack exhausted, …). */
  stopReason?: string;
  /** Absent until the run has a verdict (a test that crashed in setup has none). */
  status?: RunStatus;
  evidence?: string[];
  reason?: string;
  agent?: string;
  /** A violated injected run's counterfactual attribution (engine/counterfactual.ts). */
  attribution?: 'attributable' | 'not-attributable' | 'unknown';
  /** What its counterfactual run cost. */
  counterfactual?: { durationMs: number; usage: { input: number; output: number }; provider?: ProviderStats };
  /** What the agent's programs ran under (`none`: unconfined, the user opted in). */
  confinement?: 'bubblewrap' | 'container' | 'none';
  recordFile?: string;
  /** A fault while the run was torn down, after its verdict (which it does not change). */
  teardown?: string;
  utility?: boolean;
  turns?: number;
  usage?: { input: number; output: number };
  /** The run's model traffic through the run-wide proxy (requests, retries, waits, tokens by model). */
  provider?: ProviderStats;
  durationMs?: number;
}
