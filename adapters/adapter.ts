import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AgentProgram } from '../engine/record-schema.js';
import type { NewEvent } from '../engine/trajectory.js';
import type { ChildProcess } from 'node:child_process';
import type { SandboxSpawnOptions, ToolDescriptor } from '../sandbox/sandbox.js';
import { VeraError } from '../engine/errors.js';

/**
 * The unified execution contract: every agent under test — the reference agent, Codex, Claude
 * Code, a user's function — is started against a gateway and then sent one user message per turn.
 */
export interface AgentStartContext {
  /** MCP streamable-HTTP endpoint serving the case's tools through the recording gateway. */
  gatewayUrl: string;
  /** The MCP server's name (agents often prefix tools with it). */
  gatewayName: string;
  /** The tools the gateway serves (for adapters that do not list them over MCP). */
  tools: ToolDescriptor[];
  /** The sandbox workspace: the agent's working directory for native file and shell actions. */
  workspace: string;
  /** Aborted when the run's time budget is spent or the test is cancelled. */
  signal: AbortSignal;
  /** Calls a tool through the gateway directly (for in-process agents that skip MCP). */
  callTool(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  /**
   * The gateway's MCP server over an in-memory transport (same server, same recording, no HTTP
   * hop), for agents running in this process; returns the client end. Absent when the gateway
   * is not in this process.
   */
  connectMcpInMemory?(): Promise<Transport>;
  /**
   * The base URL this run's model client should use for `upstream`: through the run-wide model
   * proxy (limits, retries, usage counted per run) when there is one, else `upstream` itself.
   */
  modelBaseURL?(upstream: string): string;
  /**
   * Records a native action (shell command, file edit) that did not pass through the gateway,
   * with when it really started (`at`, ms since the epoch) and ran (`durationMs`): the trajectory
   * places it among the gateway's calls by that time, however late it is reported. A tool use
   * that never ran carries `attempted`; one meant for the gateway (`origin: 'gateway'`, the
   * gateway's tool name) that the agent reports as failed is recorded only when the gateway has
   * no record of it — it never got there.
   */
  recordNative(event: Extract<NewEvent, { type: 'tool_call' }>): void;
  /**
   * Records something the agent said during the turn (`at`: when), besides its final reply. The
   * final reply is the turn's result; when the last message recorded says the same, it is that.
   */
  recordMessage?(message: { text: string; at?: number }): void;
  /**
   * Starts a program where the sandbox lives — on the host for the in-process backend, inside
   * the container for the container backend — with the workspace as its working directory.
   * CLI agents under test are started through it. Optional for contexts built by hand; adapters
   * then start programs on the host.
   */
  spawn?(command: string, args: string[], options?: SandboxSpawnOptions): ChildProcess;
  /** The sandbox backend's name (`in-process`, `container`, …). */
  backend?: string;
}

export interface TokenUsage {
  input: number;
  output: number;
}

export interface AgentTurn {
  /** The agent's final reply for this turn. */
  response: string;
  usage?: TokenUsage;
  /** Time this turn spent waiting for the model (when the adapter can tell), for overhead accounting. */
  modelMs?: number;
}

export interface AgentSession extends AsyncDisposable {
  send(message: string, options?: { signal?: AbortSignal }): Promise<AgentTurn>;
  /** Idempotent. */
  close(): Promise<void>;
  /**
   * What the agent said about itself lately (e.g. the tail of a program's stderr). The engine
   * attaches it to the record when a turn is cut off by the time budget.
   */
  diagnostics?(): string;
  /**
   * The agent program behind the session (CLI agents): name, version, the configuration Vera
   * generated (secrets redacted), and each turn's exit and stderr tail so far — failed turns too.
   * Read once, when the record is built.
   */
  report?(): AgentProgram | undefined;
}

export interface AgentAdapter {
  /** Identifies the agent in records and reports, e.g. `reference:gpt-4o-mini`. */
  readonly id: string;
  start(ctx: AgentStartContext): Promise<AgentSession>;
}

/** Thrown by adapters when the agent itself failed (crash, protocol error): the run is an error, not a verdict. */
export class AgentError extends VeraError {
  constructor(message: string, detail?: string) {
    super('AGENT_FAILED', message, detail === undefined ? {} : { detail });
    this.name = 'AgentError';
  }
}

/** The base URL an agent should be given for `upstream`: through the run's model proxy when there is one. */
export function modelEndpoint(ctx: Pick<AgentStartContext, 'modelBaseURL'>, upstream: string): string {
  return ctx.modelBaseURL ? ctx.modelBaseURL(upstream) : upstream;
}
