import type { z } from 'zod';
import type { JsonValue } from '../engine/json.js';
import type { EgressRecord } from '../engine/trajectory.js';
import { VeraError } from '../engine/errors.js';
import type { RouteEquivalence } from './route-equivalence.js';

/**
 * An environment is typed state plus tool functions (AgentDojo's shape): the services an agent
 * acts through (email, files, code hosting, …). Environments are definitions; `create` makes one
 * live instance per case run.
 */

/** What a tool or operation handler may do besides changing state. */
export interface ToolContext {
  /** Report that data left through one of the environment's external channels. */
  egress(record: EgressRecord): void;
}

/**
 * A failure the agent should see as a tool error result ("no such file"), not a harness crash.
 * Tool errors become results, never exceptions at the agent.
 */
export class ToolError extends VeraError {
  constructor(message: string) {
    super('TOOL_FAILED', message);
    this.name = 'ToolError';
  }
}

export interface ToolSpec<S = unknown, I extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  /** Arguments schema; it becomes the tool's JSON Schema at the gateway. */
  input: I;
  /** Returns the result value (JSON); throws `ToolError` for errors the agent should see. */
  handler(state: S, args: z.infer<I>, ctx: ToolContext): unknown | Promise<unknown>;
}

/** An init-script operation (`email.deliver`), replayed verbatim before the agent starts. */
export interface OperationSpec<S = unknown, I extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: I;
  apply(state: S, args: z.infer<I>, ctx: ToolContext): void | Promise<void>;
}

export interface EnvironmentInstance<S = unknown> {
  readonly state: S;
  /** Plain JSON of everything a verifier may check. */
  snapshot(): JsonValue | Promise<JsonValue>;
  dispose(): void | Promise<void>;
}

export interface EnvironmentCreateContext {
  /** A fresh directory that belongs to this run (removed after it). */
  workspace: string;
}

export interface EnvironmentDefinition<S = unknown> {
  name: string;
  description: string;
  /** Names of the channels through which data leaves the organisation (egress), e.g. `email`. */
  externalChannels: string[];
  tools: ToolSpec<S>[];
  operations: OperationSpec<S>[];
  /** Other routes to what its tools do, for `vera check --robustness` (see route-equivalence.ts). */
  equivalences?: RouteEquivalence[];
  create(ctx: EnvironmentCreateContext): Promise<EnvironmentInstance<S>>;
}

/** Helper for environments whose whole state is one zod-typed JSON value. */
export function defineStateEnvironment<Schema extends z.ZodType>(def: {
  name: string;
  description: string;
  externalChannels: string[];
  state: Schema;
  initial: () => z.infer<Schema>;
  tools: ToolSpec<z.infer<Schema>>[];
  operations: OperationSpec<z.infer<Schema>>[];
  equivalences?: RouteEquivalence[];
  /** The snapshot, where it adds derived views to the state (default: a JSON copy of the state). */
  snapshot?: (state: z.infer<Schema>) => JsonValue;
}): EnvironmentDefinition<z.infer<Schema>> {
  return {
    name: def.name,
    description: def.description,
    externalChannels: def.externalChannels,
    tools: def.tools,
    operations: def.operations,
    ...(def.equivalences ? { equivalences: def.equivalences } : {}),
    async create() {
      const state = def.state.parse(def.initial()) as z.infer<Schema>;
      return {
        state,
        // The state is typed (tools and operations are checked against it), so a JSON copy is
        // the snapshot; re-validating it with zod on every snapshot cost more than the rest.
        snapshot: def.snapshot ? () => def.snapshot!(state) : () => JSON.parse(JSON.stringify(state)) as JsonValue,
        dispose: () => {},
      };
    },
  };
}

/** Identity helpers, so tool and operation literals keep their state type. */
export function defineTool<S, I extends z.ZodObject>(spec: ToolSpec<S, I>): ToolSpec<S> {
  return spec as unknown as ToolSpec<S>;
}
export function defineOperation<S, I extends z.ZodObject>(spec: OperationSpec<S, I>): OperationSpec<S> {
  return spec as unknown as OperationSpec<S>;
}

/*
 * A registry holds environments of different state types, and each one's tools and operations take
 * its own state: a map of several has no common `S`. These aliases are that existential type, written
 * once, so no other file needs `any`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the state type of one environment among many (see above)
export type AnyEnvironmentDefinition = EnvironmentDefinition<any>;
// biome-ignore lint/suspicious/noExplicitAny: as above
export type AnyEnvironmentInstance = EnvironmentInstance<any>;
// biome-ignore lint/suspicious/noExplicitAny: as above
export type AnyToolSpec = ToolSpec<any>;
