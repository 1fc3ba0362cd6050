import { z } from 'zod';
import { initStep } from '../../engine/case-schema.js';

/**
 * The admin API between the host (`ContainerBackend`) and the sandbox server inside the
 * container: plain JSON over HTTP — on 127.0.0.1 (host networking), or on a unix socket inside
 * the container that the exec-stream relay connects the host's connections to (stream-relay.ts;
 * the host then calls a listener of its own on 127.0.0.1) — every request carrying the
 * container's bearer token. The host claims the server with a fresh random token right after
 * it reports ready (`POST /v1/claim`, accepted once), before any other program runs in the
 * container — so the token is in no file and no environment an agent there could read. Bodies are validated with these schemas on the server; the host
 * checks the protocol version once, at start, so an image built from older code fails with a
 * clear "rebuild the image" message instead of odd errors later.
 */
// 2: the admin socket (SERVER_ENV.socket), the exec-stream relay (`sandbox-server.mjs relay`),
// reset's `keep` (the relay's PID survives a reset).
export const SANDBOX_PROTOCOL = 2;

/** The line the server prints on stdout once it listens: `vera-sandbox listening {"port":…,"protocol":…}`. */
export const READY_PREFIX = 'vera-sandbox listening ';

/** `port` is 0 and `socket` set when the server listens on a unix socket (the exec-stream channel). */
export const readyLine = z.object({ port: z.int().nonnegative(), socket: z.string().optional(), protocol: z.int() });

/** Environment variables the server reads. */
export const SERVER_ENV = {
  /** A fixed token (for running the server by hand); without it the first `claim` sets one. */
  token: 'VERA_SANDBOX_TOKEN',
  port: 'VERA_SANDBOX_PORT',
  /** A unix socket path to listen on instead of a TCP port (the exec-stream channel: the container has no network). */
  socket: 'VERA_SANDBOX_SOCKET',
  workspaceRoot: 'VERA_WORKSPACE_ROOT',
  /** Set by the image: the server may kill every other process of its PID namespace on reset. */
  inContainer: 'VERA_SANDBOX_CONTAINER',
} as const;

/** Where `spawn()` records the PID of each program it starts (so the host can kill its tree). */
export const EXEC_PID_DIR = '/run/vera/exec';

/** The bundled server in the image (docker/Dockerfile, scripts/build-sandbox-image.sh). */
export const SERVER_SCRIPT = '/opt/vera/sandbox-server.mjs';
/** `node SERVER_SCRIPT relay`: the exec-stream relay instead of the server (stream-relay.ts). */
export const RELAY_ARG = 'relay';
/** Where the server listens on the exec-stream channel (tmpfs /run/vera under a read-only root). */
export const ADMIN_SOCKET = '/run/vera/admin.sock';
/** Where the relay writes `<exec id>` once it listens on the ports a `spawn()` needs ("ok" or "error: …"). */
export const LISTEN_MARKER_DIR = '/run/vera/listen';

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

/** Reset: `keep` are PIDs (the relay's) that must survive the killing of every other process. */
export const resetRequest = z.strictObject({ keep: z.array(z.int().positive()).max(16).default([]) });

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
