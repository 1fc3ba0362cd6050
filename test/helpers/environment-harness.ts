import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { EgressRecord } from '../../engine/trajectory.js';
import { ToolError, type EnvironmentDefinition, type ToolContext } from '../../sandbox/environment.js';

/**
 * Drives one environment through its definition, as the sandbox does: operations and tools with
 * their zod schemas, egress collected per harness, results passed through JSON as they cross to
 * the agent. For the tests of the individual environments.
 */
export interface Harness {
  workspace: string;
  state: any;
  egress: EgressRecord[];
  op(name: string, args?: Record<string, unknown>): Promise<void>;
  /** The ToolError message of an operation that must fail. */
  opFails(name: string, args?: Record<string, unknown>): Promise<string>;
  call(name: string, args?: Record<string, unknown>): Promise<any>;
  /** The ToolError message of a call that must fail. */
  fails(name: string, args?: Record<string, unknown>): Promise<string>;
  snapshot(): Promise<any>;
  dispose(): Promise<void>;
}

const temps: string[] = [];

export async function tempDir(prefix = 'vera-env-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

/** Removes every temp directory made so far (call from afterEach/afterAll). */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

async function expectToolError(work: () => Promise<unknown>, what: string): Promise<string> {
  try {
    await work();
  } catch (error) {
    expect(error, `${what}: ${(error as Error).message}`).toBeInstanceOf(ToolError);
    return (error as Error).message;
  }
  throw new Error(`${what} did not fail`);
}

export async function harness(def: EnvironmentDefinition<any>, workspace?: string): Promise<Harness> {
  const ws = workspace ?? (await tempDir());
  const instance = await def.create({ workspace: ws });
  const egress: EgressRecord[] = [];
  const ctx: ToolContext = { egress: (r) => void egress.push(r) };
  const h: Harness = {
    workspace: ws,
    state: instance.state,
    egress,
    async op(name, args = {}) {
      const op = def.operations.find((o) => o.name === name);
      if (!op) throw new Error(`no operation ${def.name}.${name}`);
      await op.apply(instance.state, op.input.parse(args), ctx);
    },
    opFails: (name, args = {}) => expectToolError(() => h.op(name, args), `${def.name}.${name} ${JSON.stringify(args)}`),
    async call(name, args = {}) {
      const tool = def.tools.find((t) => t.name === name);
      if (!tool) throw new Error(`no tool ${name} in ${def.name}`);
      const result = await tool.handler(instance.state, tool.input.parse(args), ctx);
      return JSON.parse(JSON.stringify(result ?? null));
    },
    fails: (name, args = {}) => expectToolError(() => h.call(name, args), `${name} ${JSON.stringify(args)}`),
    snapshot: async () => JSON.parse(JSON.stringify(await instance.snapshot())),
    dispose: async () => instance.dispose(),
  };
  return h;
}

/** Whether a tool's input schema accepts `args` (the gateway refuses what it does not). */
export function accepts(def: EnvironmentDefinition<any>, tool: string, args: Record<string, unknown>): boolean {
  const spec = def.tools.find((t) => t.name === tool) ?? def.operations.find((o) => o.name === tool);
  if (!spec) throw new Error(`no tool or operation ${tool} in ${def.name}`);
  return spec.input.safeParse(args).success;
}
