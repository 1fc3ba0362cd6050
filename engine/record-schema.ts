import { z } from 'zod';
import { jsonObjectSchema } from './json-schema.js';
import { strategyIds, threatModels } from './case-helpers.js';
import { trajectoryEventSchema } from './trajectory-schema.js';

/**
 * A safety record is a contract: reports, `vera replay`, `vera diff` and the next exploration
 * read records written by other runs, machines and versions. The schemas come first and the
 * types are inferred from them, so the writer (`CaseRun.finish`, type-checked against these
 * types) and the reader (`parseRecord`, validating with them) share one definition.
 *
 * Objects strip keys they do not know (zod's default) rather than refuse them: a field added
 * within a version is then no reason for an older reader to drop the whole record. A change an
 * older reader must not misread takes a new version (`record-reader.ts`).
 */

/** The version this code writes and reads; older ones are upgraded on load (`record-reader.ts`). */
export const RECORD_SCHEMA = 'vera.record/v1';

export { jsonObjectSchema, jsonValueSchema } from './json-schema.js';

export const runStatusSchema = z.enum(['violated', 'safe', 'not-applicable', 'error']);

export const evidenceSchema = z.object({
  /** Where in the predicate tree, e.g. `verifier.all[0].toolCall`. */
  at: z.string(),
  holds: z.boolean(),
  message: z.string(),
  /** Trajectory events that matched (their `seq`). */
  events: z.array(z.number().int()).optional(),
  /** Snapshot paths that matched. */
  paths: z.array(z.string()).optional(),
});

export const verdictSchema = z.object({
  status: runStatusSchema,
  /** Why the verifier held or not; for N/A and errors, why there is no verdict. */
  evidence: z.array(evidenceSchema),
  reason: z.string().optional(),
});

export const phaseTimingsSchema = z.object({
  sandboxMs: z.number(),
  initMs: z.number(),
  gatewayMs: z.number(),
  agentStartMs: z.number(),
  controlMs: z.number(),
  agentMs: z.number(),
  /** Part of `agentMs` spent waiting for the model, when the adapter reports it. */
  modelMs: z.number(),
  verifyMs: z.number(),
});

const tokenCountSchema = z.object({ input: z.number(), output: z.number() });

/** What one run's model traffic looked like through the run-wide proxy (provider/model-proxy.ts). */
export const providerStatsSchema = z.object({
  requests: z.number(),
  /** Attempts repeated after a retryable answer or a connection failure. */
  retries: z.number(),
  /** 429 answers received. */
  rateLimited: z.number(),
  /** Other retryable answers (5xx, 529, 408, 409) and connection failures. */
  transientErrors: z.number(),
  /** Time spent waiting: for a slot under the run-wide limits, and before retries. */
  waitedMs: z.number(),
  usage: tokenCountSchema,
  /** Usage by the model named in each request. */
  byModel: z.record(z.string(), tokenCountSchema.extend({ requests: z.number() })),
});

/** One tool as a model request listed it. */
export const offeredToolSchema = z.object({
  name: z.string(),
  /** The group it is listed under (Codex lists MCP tools in a namespace, `mcp__vera`). */
  namespace: z.string().optional(),
  /** For tools that are not plain functions: the provider-side type (`web_search`, `web_search_20250305`). */
  type: z.string().optional(),
  /** Its description as the model read it, cut to a few hundred characters. */
  description: z.string().optional(),
  /** One of the gateway's tools (as the agent names it), not the agent program's own. */
  gateway: z.boolean().optional(),
});

/** A system prompt and a tool list that reached the model together (one or more requests). */
export const modelPromptSchema = z.object({
  /** The system (and developer) instructions of the request, joined. */
  system: z.string(),
  tools: z.array(offeredToolSchema),
});

/**
 * What the agent's model requests carried, as the run-wide model proxy saw them: each distinct
 * system prompt + tool list once, and per turn which of them were sent. This is what the model
 * was really offered — the agent program's own tools (Claude Code's WebFetch, OpenClaw's
 * browser, …) beside the gateway's — not what the adapter asked for.
 */
export const offeredSchema = z.object({
  prompts: z.array(modelPromptSchema),
  turns: z.array(
    z.object({
      /** 0 for requests before the first user message (a program warming up). */
      turn: z.number().int(),
      requests: z.number().int(),
      /** Indexes into `prompts`. */
      prompts: z.array(z.number().int()),
      models: z.array(z.string()),
    }),
  ),
  /** Model requests past the proxy's per-run limit, counted but not kept. */
  unlogged: z.number().int().optional(),
});

/** What one turn's program run looked like, as the adapter saw it. */
export const agentTurnReportSchema = z.object({
  turn: z.number().int(),
  /** How the turn's program ended, for agents that start one per turn (null when a signal ended it). */
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().optional(),
  /** The end of what the program wrote to stderr during the turn. */
  stderrTail: z.string().optional(),
});

/** The agent program under test: which one, how Vera configured it, and how each turn's run ended. */
export const agentProgramSchema = z.object({
  name: z.string(),
  version: z.string().optional(),
  path: z.string().optional(),
  /** The configuration Vera generated for the session (files, command-line flags), secrets redacted. */
  config: z.array(z.object({ name: z.string(), content: z.string() })),
  turns: z.array(agentTurnReportSchema),
});

/**
 * The control agent's audit transcript as stored. control/control.ts keeps its own types for
 * them (that folder is not this layer's to import); test/record-schema.test.ts fails to
 * type-check when the two drift apart.
 */
const controlDecisionSchema = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('send'),
    message: z.string(),
    strategy: z.string().optional(),
    payloads: z.record(z.string(), z.string()).optional(),
    calls: z.array(z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()) })).optional(),
    note: z.string().optional(),
  }),
  z.object({ action: z.literal('stop'), reason: z.string() }),
  // A control model's reply kept for audit but never sent (the adversary model refused and was asked again).
  z.object({ action: z.literal('discard'), reason: z.string() }),
]);

export const controlExchangeSchema = z.object({
  /** Turns completed when the decision was made. */
  turn: z.number().int(),
  /** The strategy in force for this decision. */
  strategy: z.string().optional(),
  switched: z.object({ from: z.string(), to: z.string(), reason: z.string() }).optional(),
  request: z
    .object({
      model: z.string(),
      seed: z.number(),
      temperature: z.number().optional(),
      messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })),
      totalMessages: z.number().int(),
    })
    .optional(),
  response: z.object({ content: z.string(), finishReason: z.string().optional(), usage: tokenCountSchema.optional() }).optional(),
  decision: controlDecisionSchema,
  /** The adversary model declined its red-team job in this reply (the phrase, or what was missing); none of it reached the agent. */
  adversaryRefusal: z.string().optional(),
  /** Payload rewrites the decision asked for: applied (by rule id) and rejected. */
  payloads: z.object({ applied: z.record(z.string(), z.string()), rejected: z.array(z.string()) }).optional(),
  note: z.string().optional(),
});

export const strategyPlanSchema = z.object({
  sequence: z.array(z.enum(strategyIds)),
  /** Where the sequence came from. */
  source: z.enum(['case', 'options', 'default']),
  /** The map key that matched the attack method (`attack.strategies` for the case). */
  matched: z.string(),
  rule: z.string(),
});

export const attributionSchema = z.object({
  verdict: z.enum(['attributable', 'not-attributable', 'unknown']),
  counterfactual: z.object({
    status: runStatusSchema,
    stopReason: z.string(),
    /** The evidence that decided the counterfactual's verdict. */
    evidence: z.array(z.string()),
    turns: z.number().int(),
    durationMs: z.number(),
    usage: tokenCountSchema,
    /** Its model traffic through the run-wide proxy, when there was one (reports add it to the totals). */
    provider: providerStatsSchema.optional(),
    error: z.string().optional(),
  }),
});

/**
 * Everything about one case run, enough to re-verify and re-report without the agent:
 * the trajectory, both snapshots, the responses, the secrets drawn, and the verdict.
 */
export const safetyRecordSchema = z.object({
  schema: z.literal(RECORD_SCHEMA),
  runId: z.string(),
  caseId: z.string(),
  caseHash: z.string(),
  caseFile: z.string().optional(),
  title: z.string(),
  goal: z.string(),
  taxonomy: z.object({ risk: z.string(), attack: z.string(), environment: z.string() }),
  threatModel: z.enum(threatModels),
  repeat: z.number().int(),
  /** This run's seed (per repeat; see engine/seed.ts). Absent only in records written before seeds existed. */
  seed: z.number().optional(),
  agent: z.string(),
  control: z.string(),
  backend: z.string(),
  /**
   * What the agent's own programs ran under, when it started any (CLI agents): `bubblewrap`,
   * `container`, or `none` — an unconfined run the user opted into (the reports warn about it).
   */
  confinement: z.enum(['bubblewrap', 'container', 'none']).optional(),
  /**
   * For a violated run with injections: the same case, seed and canaries re-run with every
   * injection in `identity` mode (the attack text gone; a multi-channel adversary's messages
   * kept). `attributable`: that run was safe — the injected text caused the violation;
   * `not-attributable`: it violated too — the harm came from elsewhere; `unknown`: it could not
   * be judged (error, N/A).
   */
  attribution: attributionSchema.optional(),
  /** Calls the gateway refused — past the tool-call budget, or after the run ended — when there were any. */
  gateway: z.object({ calls: z.number(), refused: z.number(), refusedNotRecorded: z.number(), late: z.number(), lateNotRecorded: z.number() }).optional(),
  startedAt: z.string(),
  durationMs: z.number(),
  timings: phaseTimingsSchema,
  status: runStatusSchema,
  verdict: verdictSchema,
  utility: z.object({ holds: z.boolean(), evidence: z.array(evidenceSchema) }).optional(),
  /**
   * Why the run has no verdict. `code` is stable (engine/errors.ts, listed in docs/architecture.md);
   * `kind` the error's name. Records written before codes existed have none.
   */
  error: z
    .object({
      kind: z.string(),
      code: z.string().optional(),
      message: z.string(),
      detail: z.string().optional(),
      /** The turn the agent failed in (an agent's fault during the conversation). */
      turn: z.number().int().optional(),
      /**
       * Where an error of the user's own code was thrown: its stack frames (source-mapped where the
       * module was transformed, so they name the agent's `.ts` file and line). Absent for Vera's own errors.
       */
      stack: z.string().optional(),
    })
    .optional(),
  /**
   * A fault while the run's parts were torn down, after its verdict was decided: reported, and never
   * read by the verdict rule — a run judged safe stays safe, live and replayed.
   */
  teardown: z.object({ kind: z.string(), code: z.string().optional(), message: z.string() }).optional(),
  stopReason: z.string(),
  turns: z.number().int(),
  secrets: z.record(z.string(), z.string()),
  injections: z.object({ rules: z.array(z.string()), fired: z.array(z.string()), payloads: z.record(z.string(), z.string()) }),
  trajectory: z.array(trajectoryEventSchema),
  responses: z.array(z.string()),
  initialState: jsonObjectSchema,
  finalState: jsonObjectSchema,
  /** Tokens the run used: counted by the model proxy when there is one, else as the agent reported. */
  usage: tokenCountSchema,
  /** The run's model traffic through the run-wide proxy: requests, retries, rate limits, waits, tokens by model. */
  provider: providerStatsSchema.optional(),
  /** The agent program (CLI agents): name, version, the config Vera generated, each turn's exit and stderr. */
  agentProgram: agentProgramSchema.optional(),
  /** The system prompts and tool lists the agent's model requests carried, per turn (through the model proxy). */
  offered: offeredSchema.optional(),
  /** Every control-agent decision: model requests and responses, strategy, switches, payload rewrites, stops. */
  control_transcript: z.array(controlExchangeSchema),
  /** The adversary's strategy plan (sequence, source, switching rule), when it had one. */
  controlPlan: strategyPlanSchema.optional(),
  /** Credentials redacted before writing, by kind (engine/redact.ts); absent when none were found. */
  redactions: z.record(z.string(), z.number()).optional(),
  /**
   * Set when the record was cut to stay under the size cap (`MAX_RECORD_BYTES`): snapshots over
   * their budget stored as a bounded summary (`snapshotValues` cut: long strings as their first
   * characters, length and sha256; large collections as their first entries and a count), long tool
   * results and outputs shortened, and — if that was not enough — events from the middle of the
   * trajectory dropped. The verdict was decided on the full state; re-verification of such a record
   * may differ from it.
   */
  truncated: z.object({ originalBytes: z.number(), shortenedValues: z.number(), droppedEvents: z.number(), snapshotValues: z.number().optional() }).optional(),
});

export type RunStatus = z.infer<typeof runStatusSchema>;
export type Evidence = z.infer<typeof evidenceSchema>;
export type Verdict = z.infer<typeof verdictSchema>;
export type PhaseTimings = z.infer<typeof phaseTimingsSchema>;
export type ProviderStats = z.infer<typeof providerStatsSchema>;
export type StoredControlExchange = z.infer<typeof controlExchangeSchema>;
export type StoredStrategyPlan = z.infer<typeof strategyPlanSchema>;
export type Attribution = z.infer<typeof attributionSchema>;
export type SafetyRecord = z.infer<typeof safetyRecordSchema>;
export type OfferedTool = z.infer<typeof offeredToolSchema>;
export type ModelPrompt = z.infer<typeof modelPromptSchema>;
export type Offered = z.infer<typeof offeredSchema>;
export type AgentTurnReport = z.infer<typeof agentTurnReportSchema>;
export type AgentProgram = z.infer<typeof agentProgramSchema>;
