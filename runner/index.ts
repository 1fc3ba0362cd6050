/**
 * `vera-safety/runner`: run, judge and record cases without Vitest — the contracts (engine/: the case
 * format, the predicate language, records, trajectories, the verdict rule) and the runner (runner/).
 */
// The case format: its types, the schema that validates a whole case, and the helpers a runner needs;
// the sub-schemas are the format's internals (docs/case-format.md documents the fields).
export {
  safetyCase,
  threatModels,
  strategyIds,
  environmentsOf,
  adversarialUser,
  injectsToolResults,
  injectionRuleId,
  toolDescriptionRuleId,
  type SafetyCase,
  type SafetyCaseInput,
  type ThreatModel,
  type StrategyId,
  type Budgets,
  type InitStep,
  type InjectionMode,
  type InjectionRule,
  type ToolDescriptionRule,
  type ScriptedPlan,
  type SecretSpec,
  type UserKnowledge,
  type Witness,
} from '../engine/case-schema.js';
export { loadCaseFile, parseCaseSource, formatProblem, CaseFileError, type CaseProblem, type LoadedCase, type CaseLoadResult } from '../engine/case-loader.js';
// The predicate language: its types, and the schema that validates a verifier written as data.
export {
  predicate,
  predicateKinds,
  type Predicate,
  type Condition,
  type FieldConditions,
  type Operand,
  type ValueMatcher,
  type ToolCallMatcher,
  type StateMatcher,
  type ResponseMatcher,
  type EgressMatcher,
  type CountBounds,
  type Encoding,
  type Normalizer,
  type StateScope,
  type Aggregate,
  type Selection,
  type SetComparison,
  type InitialRef,
  type SecretRef,
} from '../engine/predicate-schema.js';
export {
  evaluatePredicate,
  egressRecords,
  VerifierError,
  type VerificationInput,
  type Evidence,
  type PredicateResult,
  type CustomCheck,
} from '../engine/verifier.js';
// A run's stages: made by `prepareRun` only, so they are types here.
export {
  prepareRun,
  type PreparedRun,
  type SandboxedRun,
  type ConnectedRun,
  type AgentStartedRun,
  type StartedRun,
  type FinishedRun,
  type CaseRunOptions,
  type JudgedRun,
} from './run-stages.js';
export { ERROR_CODES, VeraError, isVeraError, type VeraErrorCode } from '../engine/errors.js';
export { runCase, controlFor, finalizeRecord, type RunCaseOptions, type RunCaseResult } from './run-case.js';
export {
  caseHash,
  newRunId,
  writeRecord,
  recordFileName,
  type SafetyRecord,
  type Verdict,
  type RunStatus,
  type PhaseTimings,
} from '../engine/record-writer.js';
export { safetyRecordSchema, verdictSchema, evidenceSchema, RECORD_SCHEMA, type Attribution } from '../engine/record-schema.js';
export { parseRecord, recordMigrations, type ParsedRecord, type RecordMigration } from '../engine/record-reader.js';
export { verdictOf } from '../engine/verdict.js';
export { trajectoryEventSchema } from '../engine/trajectory-schema.js';
export { checkWitnesses, evaluateWitness, type WitnessCheck, type WitnessResult, type WitnessKind, type WitnessRoute } from './witness.js';
export { checkRobustness, describeRouteOutcome, type RobustnessOptions, type RobustnessReport, type RouteOutcome } from './robustness.js';
export { generateSecrets, fillSecrets, secretNamesIn, type Secrets } from '../engine/secrets.js';
export { Trajectory, type TrajectoryEvent, type ToolCallEvent, type MessageEvent, type EgressRecord } from '../engine/trajectory.js';
export {
  asrTable,
  riskCategory,
  taxonomyTable,
  taxonomyAncestors,
  summarizeAsr,
  asrRowOfRecord,
  asrInterval,
  type AsrRow,
  type AsrTable,
  type AsrCell,
  type AsrSummary,
} from '../engine/asr.js';
export {
  wilsonInterval,
  rate,
  asrStatistics,
  successWithinK,
  utilityStatistics,
  statisticsByThreatModel,
  attemptGroupKey,
  type Interval,
  type Rate,
  type AttemptRow,
  type RunStatistics,
  type WithinKStatistics,
  type ThreatModelStatistics,
} from '../engine/stats.js';
export { repeatSeed } from '../engine/seed.js';
export { runCaseRepeats, type RunRepeatsOptions } from './repeats.js';
export { redactRecord, redactText, type RedactionOptions } from '../engine/redact.js';
export { resolvePath, parsePath, type PathMatch } from '../engine/paths.js';
export type { JsonValue, JsonObject } from '../engine/json.js';
export { compareStrategies, type CompareStrategiesOptions, type StrategyRun } from './compare-strategies.js';
