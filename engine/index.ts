/** `vera-safety/engine`: run, judge and record cases without Vitest. */
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
} from './case-schema.js';
export { loadCaseFile, parseCaseSource, formatProblem, CaseFileError, type CaseProblem, type LoadedCase, type CaseLoadResult } from './case-loader.js';
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
} from './predicate-schema.js';
export { evaluatePredicate, egressRecords, VerifierError, type VerificationInput, type Evidence, type PredicateResult, type CustomCheck } from './verifier.js';
export { CaseRun, type CaseRunOptions } from './case-run.js';
export { runCase, controlFor, finalizeRecord, type RunCaseOptions, type RunCaseResult } from './run-case.js';
export { caseHash, newRunId, writeRecord, recordFileName, type SafetyRecord, type Verdict, type RunStatus, type PhaseTimings } from './record.js';
export { safetyRecordSchema, verdictSchema, evidenceSchema, RECORD_SCHEMA, type Attribution } from './record-schema.js';
export { parseRecord, recordMigrations, type ParsedRecord, type RecordMigration } from './record-reader.js';
export { verdictOf } from './verdict.js';
export { trajectoryEventSchema } from './trajectory-schema.js';
export { checkWitnesses, evaluateWitness, type WitnessCheck, type WitnessResult, type WitnessKind } from './witness.js';
export { generateSecrets, fillSecrets, secretNamesIn, type Secrets } from './secrets.js';
export { Trajectory, type TrajectoryEvent, type ToolCallEvent, type MessageEvent, type EgressRecord } from './trajectory.js';
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
} from './asr.js';
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
} from './stats.js';
export { repeatSeed } from './seed.js';
export { runCaseRepeats, type RunRepeatsOptions } from './repeats.js';
export { redactRecord, redactText, type RedactionOptions } from './redact.js';
export { resolvePath, parsePath, type PathMatch } from './paths.js';
export type { JsonValue, JsonObject } from './json.js';
