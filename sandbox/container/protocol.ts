import { z } from 'zod';
import { initStep } from '../../engine/case-schema.js';

/**
 * The admin API between the host (`ContainerBackend`) and the sandbox server inside the
 * container: plain JSON over HTTP on 127.0.0.1 (host networking), every request carrying the
 * container's bearer token. The host claims the server with a fresh random token right after
 * it reports ready (`POST /v1/claim`, accepted once), before any other program runs in the
 * container — so the token is in no file and no environment an agent there could read. Bodies are validated with these schemas on the server; the host
 * checks the protocol version once, at start, so an image built from older code fails with a
 * clear "rebuild the image" message instead of odd errors later.
 */
export const SANDBOX_PROTOCOL = 1;

/** The line the server prints on stdout once it listens: `vera-sandbox listening {"port":…,"protocol":…}`. */
export const READY_PREFIX = 'vera-sandbox listening ';

export const readyLine = z.object({ port: z.int().positive(), protocol: z.int() });

/** Environment variables the server reads. */
export const SERVER_ENV = {
  /** A fixed token (for running the server by hand); without it the first `claim` sets one. */
  token: 'VERA_SANDBOX_TOKEN',
  port: 'VERA_SANDBOX_PORT',
  workspaceRoot: 'VERA_WORKSPACE_ROOT',
  /** Set by the image: the server may kill every other process of its PID namespace on reset. */
  inContainer: 'VERA_SANDBOX_CONTAINER',
} as const;

/** Where `spawn()` records the PID of each program it starts (so the host can kill its tree). */
export const EXEC_PID_DIR = '/run/vera/exec';

export const claimRequest = z.strictObject({ token: z.string().min(32).max(256) });

export const startRequest = z.strictObject({
  environments: z.array(z.string().min(1)).min(1),
  label: z.string().max(200).optional(),
});

export const applyRequest = z.strictObject({
  step: initStep,
  index: z.int().nonnegative(),
});

export const callRequest = z.strictObject({
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).default({}),
});

export const execKillRequest = z.strictObject({
  /** The id the host gave the program at `spawn()`: `[a-z0-9-]+`. */
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
});

export const toolDescriptor = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  environment: z.string(),
});

export const egressRecord = z.object({ channel: z.string(), destination: z.string(), content: z.string() });

export const toolOutcome = z.object({
  value: z.unknown(),
  isError: z.boolean(),
  error: z.string().optional(),
  egress: z.array(egressRecord),
});

export const healthResponse = z.object({ protocol: z.int(), started: z.boolean() });
export const startResponse = z.object({ workspace: z.string(), tools: z.array(toolDescriptor) });
/** Reset and exec-kill answers: how many processes were signalled. */
export const killedResponse = z.object({ killed: z.int().nonnegative() });
export const snapshotResponse = z.object({ snapshot: z.record(z.string(), z.unknown()) });

/** Every non-2xx answer: `kind` says what failed; `InitScriptError` carries its step and op. */
export const errorResponse = z.object({
  error: z.object({
    kind: z.string(),
    message: z.string(),
    step: z.int().optional(),
    op: z.string().optional(),
    detail: z.string().optional(),
  }),
});
export type ErrorResponse = z.infer<typeof errorResponse>;

export const ROUTES = {
  health: '/v1/health',
  claim: '/v1/claim',
  start: '/v1/start',
  apply: '/v1/apply',
  tools: '/v1/tools',
  call: '/v1/call',
  snapshot: '/v1/snapshot',
  reset: '/v1/reset',
  execKill: '/v1/exec/kill',
} as const;
