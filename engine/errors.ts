/**
 * Every error Vera raises on purpose is a `VeraError` with a stable code from this one table (as
 * Vitest keeps its errors, and the MCP SDK its error codes, in one place). A code never changes
 * meaning: records carry it (`record.error.code`), reports and CI scripts may match on it, and
 * docs/architecture.md lists the table. Subclasses exist only where an error carries structured
 * fields (a file and line, an init step); each has exactly one code.
 */
export const ERROR_CODES = {
  // The user's input.
  CASE_INVALID: 'a case file does not parse or validate (the message names file, line and field)',
  PIPELINE_FILE_INVALID: 'a pipeline file (sources, plan, review, recorded replies) does not parse or validate',
  PATH_INVALID: 'a verifier or state path is malformed',
  VERIFIER_INVALID: 'a verifier cannot be evaluated on this run (a reference that names nothing, a custom check that is missing)',
  OPERAND_MISSING: 'a value a verifier condition needs is not there (a `fromInitial` path, a capture, a number)',
  INIT_STEP_FAILED: 'an init step failed to replay: a broken case, not an unsafe agent',
  // The machine.
  CONFINEMENT_UNAVAILABLE: 'a program or a shell command cannot be confined on this machine (no usable bubblewrap)',
  ENDPOINT_UNREACHABLE: 'a confined agent was given a model endpoint it has no route to',
  SANDBOX_FAILED: 'the sandbox container died or vanished during the run',
  SANDBOX_REFUSED: 'the sandbox server refused a request (a bad body, an unknown environment): a bug or a broken case',
  // A run's parts. A fault with no code of its own gets the code of the stage it happened in.
  SANDBOX_START_FAILED: 'the sandbox (or its init script) did not start',
  GATEWAY_START_FAILED: 'the recording MCP gateway did not start',
  AGENT_START_FAILED: 'the agent under test did not start (its module did not load, its program did not launch)',
  CONTROL_START_FAILED: 'the control agent (user or adversary) did not start',
  AGENT_FAILED: 'the agent under test failed during the conversation (a crash, a protocol error, an exception in its code)',
  GATEWAY_TOOLS_NOT_OFFERED:
    "the agent's model requests carried none of the gateway's tools (its MCP connection failed, or it did not offer them): the run cannot say it was safe",
  CONTROL_FAILED: 'the control agent could not do its job for this case (not a verdict on the agent under test)',
  TOOL_FAILED: 'a tool refused a call; the agent sees it as an error result, never as an exception',
  // A run as a whole.
  RUN_TIME_BUDGET: "the case's time budget ended the run",
  RUN_ABORTED: 'the run was cancelled from outside (the test timed out, the user interrupted)',
  RUN_INTERRUPTED: 'the test ended before the run reached its verdict (a fixture failed)',
  RUN_NOT_STARTED: 'the sandbox never started, so there is nothing to judge',
  VERIFICATION_FAILED: "the verifier threw while judging the run's final state",
  HARNESS_FAILED: 'Vera itself failed during the run, outside the agent and the control agent (a bug: report it with the record)',
  RUN_STAGE_ORDER: 'a stage of a run was used out of order or twice (a bug in the caller)',
  RUN_NOT_JUDGED: 'a run ended in a fault and has no verdict (the Vitest test fails with this)',
  // The model.
  MODEL_CALL_FAILED: 'a pipeline model call failed or kept answering what its schema refuses',
  RECORDED_REPLY_MISSING: 'a recorded model reply the replay needs is not on file',
  // The test double (vera-safety/testing).
  SCRIPT_MISMATCH: "a request did not fit the scripted model's script",
  SCRIPTED_HTTP: 'the scripted model was told to answer with an HTTP error',
  WIRE_REQUEST_INVALID: 'a request to the scripted model is malformed for its wire protocol',
} as const;

export type VeraErrorCode = keyof typeof ERROR_CODES;

export interface VeraErrorOptions {
  /** More than the message: an agent program's stderr tail, a server's answer. Recorded as `error.detail`. */
  detail?: string;
  cause?: unknown;
}

export class VeraError extends Error {
  readonly detail: string | undefined;

  constructor(
    readonly code: VeraErrorCode,
    message: string,
    options: VeraErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VeraError';
    this.detail = options.detail;
  }
}

/** Also true for a VeraError of another copy of this module (the built package beside its sources). */
export function isVeraError(error: unknown): error is VeraError {
  if (error instanceof VeraError) return true;
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/** Stack frames a record keeps of a user's error: enough to find the line, not a whole async chain. */
const STACK_FRAMES = 12;

/**
 * An error as a record keeps it: its name, its code (its own, else `fallback`), its message and
 * detail — and, for an error that is not Vera's own (the user's agent threw it), its stack frames.
 */
export function errorEntry(error: unknown, fallback: VeraErrorCode): { kind: string; code: VeraErrorCode; message: string; detail?: string; stack?: string } {
  const e = error as { name?: unknown; message?: unknown; detail?: unknown; stack?: unknown } | undefined;
  const code = isVeraError(error) ? error.code : fallback;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const frames =
    !isVeraError(error) && typeof e?.stack === 'string'
      ? e.stack
          .split('\n')
          .filter((l) => /^\s+at /.test(l))
          .slice(0, STACK_FRAMES)
          .join('\n')
      : '';
  return {
    kind: typeof e?.name === 'string' && e.name ? e.name : 'Error',
    code,
    message,
    ...(typeof e?.detail === 'string' ? { detail: e.detail } : {}),
    ...(frames ? { stack: frames } : {}),
  };
}
