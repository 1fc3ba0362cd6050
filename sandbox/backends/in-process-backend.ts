import type { ChildProcess } from 'node:child_process';
import { DEFAULT_RESOURCE_LIMITS, type ResourceLimits } from '../confinement/resource-limits.js';
import { accessSync, constants, mkdtempSync, realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { InitStep } from '../../engine/case-schema.js';
import type { JsonObject, JsonValue } from '../../engine/json.js';
import type { EgressRecord } from '../../engine/trajectory.js';
import { ProgramConfinement, type ProgramConfinementMode } from '../confinement/program-confinement.js';
import { scratchPrefix, scratchRoots, sweepStaleScratch, trackScratch, untrackScratch } from './scratch-dirs.js';
import type { AnyEnvironmentDefinition, AnyEnvironmentInstance, AnyToolSpec } from '../environment.js';
import { ToolError } from '../environment.js';
import { BUILTIN_ENVIRONMENT_NAMES, loadBuiltinEnvironment } from '../environments/builtin-loaders.js';
import {
  InitScriptError,
  type SandboxBackend,
  type SandboxSpawnOptions,
  type SandboxSpec,
  type StartedSandbox,
  type ToolDescriptor,
  type ToolOutcome,
} from '../sandbox.js';

const schemaCache = new WeakMap<z.ZodObject, Record<string, unknown>>();

export function toolJsonSchema(input: z.ZodObject): Record<string, unknown> {
  let schema = schemaCache.get(input);
  if (!schema) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(input, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    schema = rest;
    schemaCache.set(input, schema);
  }
  return schema;
}

export interface InProcessBackendOptions {
  /** Extra or replacement environments, by name (user-defined environments go here). */
  environments?: Record<string, AnyEnvironmentDefinition>;
  /** Parent directory for run workspaces (default: the OS temp directory). */
  tmpRoot?: string;
  /**
   * How programs under test (CLI agents) start: `bubblewrap` (default: confined, or refused where
   * bubblewrap cannot run) or `unconfined` (plain host processes: the explicit opt-in).
   */
  programs?: ProgramConfinementMode;
  /** The bubblewrap program that confines them (default `bwrap` on PATH). */
  bwrap?: string;
  /**
   * Destinations a confined program's own requests may reach (an origin `https://pypi.org`, a
   * host, or `*.example.com`); every other request is refused and recorded. Default none.
   */
  egressAllow?: string[];
  /**
   * What each program under test (and everything it starts) may use: processes at once, memory,
   * CPU seconds per process, file size (`sandbox/confinement/resource-limits.ts`; defaults
   * `DEFAULT_RESOURCE_LIMITS`). The process count and memory need a cgroup Vera can make (root, or
   * delegated cgroup v2); CPU time and file size hold everywhere.
   */
  limits?: Partial<ResourceLimits>;
}

let defaultRoot: string | undefined;
/**
 * Where run workspaces go: `VERA_WORKSPACE_DIR`, else `TMPDIR` when set, else a RAM-backed
 * `/dev/shm` when it is writable (workspaces are throwaway; on a disk every small file write
 * costs ten times more), else the OS temp directory.
 */
export function workspaceRoot(): string {
  if (process.env.VERA_WORKSPACE_DIR) return process.env.VERA_WORKSPACE_DIR;
  if (process.env.TMPDIR) return tmpdir();
  if (defaultRoot === undefined) {
    defaultRoot = tmpdir();
    try {
      accessSync('/dev/shm', constants.W_OK);
      defaultRoot = '/dev/shm';
    } catch {
      // No tmpfs here (macOS, Windows, a locked-down container): the OS temp directory.
    }
  }
  return defaultRoot;
}

const swept = new Set<string>();

/** Runs the environments inside this process: fast, no Docker; the default backend. */
export class InProcessBackend implements SandboxBackend {
  readonly name = 'in-process';

  constructor(private readonly options: InProcessBackendOptions = {}) {}

  async start(spec: SandboxSpec): Promise<StartedSandbox> {
    // A built-in environment loads when a run first mounts it: a run pays for the schemas (and
    // the SQLite binding) of the environments it mounts, not of all twelve.
    const definitions = await Promise.all(
      spec.environments.map(async (name) => {
        const own = this.options.environments?.[name];
        if (own) return own;
        const builtin = loadBuiltinEnvironment(name);
        if (!builtin)
          throw new Error(
            `unknown environment "${name}" (known environments: ${[...new Set([...BUILTIN_ENVIRONMENT_NAMES, ...Object.keys(this.options.environments ?? {})])].sort().join(', ')})`,
          );
        return builtin;
      }),
    );
    const root = this.options.tmpRoot ?? workspaceRoot();
    // Once per root and process: what interrupted runs of dead processes left behind goes first.
    if (!swept.has(root)) {
      swept.add(root);
      sweepStaleScratch(scratchRoots(root));
    }
    const workspace = new LazyWorkspace(join(root, scratchPrefix('workspace', (spec.label ?? 'run').replace(/[^a-z0-9-]/gi, '_').slice(0, 40))));
    const instances: Array<{ def: AnyEnvironmentDefinition; instance: AnyEnvironmentInstance }> = [];
    try {
      // A getter: only environments that use the workspace (files, shell) make it exist.
      for (const def of definitions)
        instances.push({
          def,
          instance: await def.create({
            get workspace() {
              return workspace.path;
            },
          }),
        });
    } catch (error) {
      await Promise.allSettled(instances.map(({ instance }) => instance.dispose()));
      await workspace.remove();
      throw error;
    }
    const programs = new ProgramConfinement({
      mode: this.options.programs ?? 'bubblewrap',
      workspace: () => workspace.path,
      scratchParent: root,
      ...(this.options.bwrap ? { bwrap: this.options.bwrap } : {}),
      ...(this.options.egressAllow ? { egressAllow: this.options.egressAllow } : {}),
      limits: { ...DEFAULT_RESOURCE_LIMITS, ...this.options.limits },
    });
    try {
      await programs.start();
    } catch (error) {
      programs.dispose();
      await Promise.allSettled(instances.map(({ instance }) => instance.dispose()));
      await workspace.remove();
      throw error;
    }
    return new InProcessSandbox(workspace, instances, programs);
  }
}

/**
 * The run's workspace directory, created on first use: most environments keep their state in
 * memory, and a run that never touches the disk should not pay for a directory.
 */
class LazyWorkspace {
  private created: string | undefined;

  constructor(private readonly prefix: string) {}

  get path(): string {
    if (this.created === undefined) {
      // realpath: on some systems tmpdir is itself a symlink, and path confinement compares real paths.
      this.created = realpathSync(mkdtempSync(this.prefix));
      trackScratch(this.created);
    }
    return this.created;
  }

  /** The directory, when it exists (never creates it). */
  get existing(): string | undefined {
    return this.created;
  }

  async remove(): Promise<void> {
    if (!this.created) return;
    await rm(this.created, { recursive: true, force: true });
    untrackScratch(this.created);
  }
}

/**
 * `message` with the workspace's host path shown as the workspace path (`/dev/shm/vera-x/notes/a`
 * → `/notes/a`) and a descriptor path's prefix (`/proc/self/fd/17/a`, whose directory is unknown
 * here) as `…/a`.
 */
export function hideHostPaths(message: string, workspace: string | undefined): string {
  let out = message.replace(/\/proc\/(?:self|thread-self|\d+)\/fd\/\d+(?=\/|\b)/g, '…');
  if (workspace) out = out.split(`${workspace}/`).join('/').split(workspace).join('/');
  return out;
}

let counter = 0;

class InProcessSandbox implements StartedSandbox {
  readonly id = `inproc-${process.pid}-${++counter}`;
  readonly backend = 'in-process';
  private readonly toolIndex = new Map<string, { spec: AnyToolSpec; instance: AnyEnvironmentInstance; env: string }>();
  private readonly descriptors: ToolDescriptor[] = [];
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly lazyWorkspace: LazyWorkspace,
    private readonly instances: Array<{ def: AnyEnvironmentDefinition; instance: AnyEnvironmentInstance }>,
    private readonly programs: ProgramConfinement,
  ) {
    for (const { def, instance } of instances) {
      for (const spec of def.tools) {
        const clash = this.toolIndex.get(spec.name);
        if (clash) throw new Error(`tool "${spec.name}" is defined by both ${clash.env} and ${def.name}`);
        this.toolIndex.set(spec.name, { spec, instance, env: def.name });
        this.descriptors.push({ name: spec.name, description: spec.description, inputSchema: toolJsonSchema(spec.input), environment: def.name });
      }
    }
  }

  get workspace(): string {
    return this.lazyWorkspace.path;
  }

  tools(): ToolDescriptor[] {
    return this.descriptors;
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    const entry = this.toolIndex.get(name);
    const egress: EgressRecord[] = [];
    if (!entry) return { value: null, isError: true, error: `unknown tool "${name}"`, egress };
    const parsed = entry.spec.input.safeParse(args ?? {});
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ');
      return { value: null, isError: true, error: `invalid arguments for ${name}: ${detail}`, egress };
    }
    try {
      const value = await entry.spec.handler(entry.instance.state, parsed.data, { egress: (r) => egress.push(r) });
      return { value: value === undefined ? null : value, isError: false, egress };
    } catch (error) {
      // Tool errors become results the agent sees; only the message crosses, never a stack, and
      // an internal error's message without host paths (the environments' own errors name
      // workspace paths already; this is the last line of defence).
      const message =
        error instanceof ToolError ? error.message : `internal error in ${name}: ${hideHostPaths((error as Error).message, this.lazyWorkspace.existing)}`;
      return { value: null, isError: true, error: message, egress };
    }
  }

  async apply(step: InitStep, index: number): Promise<void> {
    const dot = step.op.indexOf('.');
    const envName = step.op.slice(0, dot);
    const opName = step.op.slice(dot + 1);
    const entry = this.instances.find(({ def }) => def.name === envName);
    if (!entry) {
      throw new InitScriptError(index, step.op, `environment "${envName}" is not mounted (mounted: ${this.instances.map(({ def }) => def.name).join(', ')})`);
    }
    const op = entry.def.operations.find((o) => o.name === opName);
    if (!op) {
      throw new InitScriptError(index, step.op, `unknown operation; ${envName} has: ${entry.def.operations.map((o) => o.name).join(', ')}`);
    }
    const parsed = op.input.safeParse(step.args);
    if (!parsed.success) {
      throw new InitScriptError(index, step.op, parsed.error.issues.map((i) => `${i.path.join('.') || 'args'}: ${i.message}`).join('; '));
    }
    try {
      await op.apply(entry.instance.state, parsed.data, { egress: () => {} });
    } catch (error) {
      throw new InitScriptError(index, step.op, (error as Error).message);
    }
  }

  async snapshot(): Promise<JsonObject> {
    const out: JsonObject = {};
    for (const { def, instance } of this.instances) out[def.name] = (await instance.snapshot()) as JsonValue;
    return out;
  }

  /**
   * In-process, a program runs on the host — confined by bubblewrap unless the backend was told
   * `programs: 'unconfined'` — in its own process group so the caller can kill the whole tree,
   * with only the environment it is given.
   */
  spawn(command: string, args: string[], options: SandboxSpawnOptions = {}): ChildProcess {
    return this.programs.spawn(command, args, options);
  }

  get confinement() {
    return this.programs.used;
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await Promise.allSettled(this.instances.map(({ instance }) => instance.dispose()));
      this.programs.dispose();
      await this.lazyWorkspace.remove();
    })();
    return this.stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}
