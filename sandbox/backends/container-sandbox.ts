import type { ChildProcess } from 'node:child_process';
import type { InitStep } from '../../engine/case-schema.js';
import type { JsonObject } from '../../engine/json.js';
import { ROUTES, snapshotResponse, toolOutcome } from '../container/protocol.js';
import { z } from 'zod';
import type { SandboxSpawnOptions, StartedSandbox, ToolDescriptor, ToolOutcome } from '../sandbox.js';
import type { ContainerInstance } from './container-instance.js';

let counter = 0;

/**
 * A case's sandbox inside a container: every method is a call to the sandbox server's admin
 * API; `spawn()` runs the program inside the container. The recording gateway stays on the host,
 * so the trajectory lives in this process and survives the container.
 */
export class ContainerSandbox implements StartedSandbox {
  readonly id: string;
  readonly backend = 'container';
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly instance: ContainerInstance,
    /** The run's workspace inside the container. */
    readonly workspace: string,
    private readonly descriptors: ToolDescriptor[],
    private readonly release: (instance: ContainerInstance) => Promise<void>,
  ) {
    this.id = `container-${instance.shortId}-${++counter}`;
  }

  /** The Docker id of the container this sandbox runs in. */
  get containerId(): string {
    return this.instance.id;
  }

  tools(): ToolDescriptor[] {
    return this.descriptors;
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    try {
      const outcome = await this.instance.client.request('POST', ROUTES.call, { name, args }, toolOutcome);
      return {
        value: outcome.value ?? null,
        isError: outcome.isError,
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        egress: outcome.egress,
      };
    } catch (error) {
      // An error result, not an exception: the gateway records the call (no record is lost) and
      // the agent sees why; a dead container then fails the run at its next snapshot.
      return { value: null, isError: true, error: (error as Error).message, egress: [] };
    }
  }

  async apply(step: InitStep, index: number): Promise<void> {
    await this.instance.client.request('POST', ROUTES.apply, { step, index }, z.object({}));
  }

  async snapshot(): Promise<JsonObject> {
    return (await this.instance.client.request('GET', ROUTES.snapshot, undefined, snapshotResponse)).snapshot as JsonObject;
  }

  private spawned = false;

  /** Programs run inside the container: the container is their confinement. */
  get confinement(): 'container' | undefined {
    return this.spawned ? 'container' : undefined;
  }

  spawn(command: string, args: string[], options: SandboxSpawnOptions = {}): ChildProcess {
    this.spawned = true;
    return this.instance.spawn(command, args, { ...options, cwd: options.cwd ?? this.workspace });
  }

  /** Idempotent: the container goes back to the pool (reset) or is removed. */
  stop(): Promise<void> {
    this.stopping ??= this.release(this.instance);
    return this.stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}
