import type { NetworkAttempt } from './confinement/egress-proxy.js';
import type { ConfinementUsed } from './confinement/program-confinement.js';
import type { ChildProcess } from 'node:child_process';
import type { InitStep } from '../engine/case-schema.js';
import type { JsonObject } from '../engine/json.js';
import type { EgressRecord } from '../engine/trajectory.js';
import { VeraError } from '../engine/errors.js';

/** A tool as the agent sees it: its JSON Schema, not its zod object, so it can cross processes. */
export interface ToolDescriptor {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  environment: string;
}

/** What one tool call did: the value it returned (or its error) and what left the organisation. */
export interface ToolOutcome {
  value: unknown;
  isError: boolean;
  error?: string;
  egress: EgressRecord[];
}

/** An init step that failed to replay: a broken case, not an unsafe agent. */
export class InitScriptError extends VeraError {
  constructor(
    readonly step: number,
    readonly op: string,
    detail: string,
  ) {
    super('INIT_STEP_FAILED', `init[${step}] ${op}: ${detail}`);
    this.name = 'InitScriptError';
  }
}

/**
 * A running sandbox: the case's environments, live. Backends (in-process, container) return this
 * from `start()`; `stop()` is idempotent and `await using` calls it.
 */
export interface StartedSandbox extends AsyncDisposable {
  readonly id: string;
  readonly backend: string;
  /** The run's workspace directory (where the files environment and native agent actions live). */
  readonly workspace: string;
  tools(): ToolDescriptor[];
  callTool(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  /** Replays one init step; throws `InitScriptError`. */
  apply(step: InitStep, index: number): Promise<void>;
  /** Plain JSON, keyed by environment name. */
  snapshot(): Promise<JsonObject>;
  /**
   * Starts a program where the sandbox lives, with the workspace as its working directory and
   * stdio piped: on the host for the in-process backend, inside the container for the container
   * backend. CLI agents under test are started this way, so their own shell and file actions
   * land in the sandbox. The caller owns the process (and kills its tree on teardown).
   */
  spawn(command: string, args: string[], options?: SandboxSpawnOptions): ChildProcess;
  /** What the programs started with `spawn` ran under (`bubblewrap`, `container`, `none`); undefined before any. */
  readonly confinement?: ConfinementUsed | undefined;
  stop(): Promise<void>;
}

export interface SandboxSpawnOptions {
  /** Working directory; default the workspace. */
  cwd?: string;
  /**
   * The program's environment, on top of a minimal base the backend sets (PATH, HOME, TMPDIR,
   * locale). Nothing of the test process's own environment reaches a program.
   */
  env?: Record<string, string>;
  /**
   * URLs the program may reach (its model endpoint; the run adds its gateway). A confined
   * program reaches these loopback endpoints and nothing else.
   */
  network?: string[];
  /** Host paths the program must read (its install folder), made visible read-only where it is confined. */
  readOnly?: string[];
  /**
   * Told of every request a confined program sends out through the sandbox's recording egress
   * proxy (refused, or relayed to a destination the user allowed); the run's own endpoints are
   * not reported.
   */
  onNetworkAttempt?: (attempt: NetworkAttempt) => void;
}

export interface SandboxSpec {
  environments: string[];
  /** Label used in the workspace directory name and in errors. */
  label?: string;
}

export interface SandboxBackend {
  readonly name: string;
  start(spec: SandboxSpec): Promise<StartedSandbox>;
}
