import type { JsonValue } from '../engine/json.js';
import { InProcessBackend, toolJsonSchema } from '../sandbox/backends/in-process-backend.js';
import type { AnyEnvironmentDefinition } from '../sandbox/environment.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';

/**
 * An environment as the pipeline's models are shown it: what it is, its tools with their input
 * schemas, its init operations with their argument schemas, its external channels, and its
 * empty snapshot — the state paths a verifier can read. The goal composer and the case compiler
 * get the same description, so a goal is composed from what can be seeded and observed.
 */
export interface EnvironmentShape {
  name: string;
  description: string;
  externalChannels: string[];
  tools: Array<{ name: string; description: string; input: Record<string, unknown> }>;
  initOperations: Array<{ op: string; description: string; args: Record<string, unknown> }>;
  emptySnapshot: JsonValue;
}

/** Describes environments of a registry, starting each once (in a sandbox) for its empty snapshot. */
export class EnvironmentShapes {
  private readonly snapshots = new Map<string, JsonValue>();
  private readonly backend: SandboxBackend;

  constructor(
    private readonly registry: Record<string, AnyEnvironmentDefinition>,
    backend?: SandboxBackend,
  ) {
    this.backend = backend ?? new InProcessBackend({ environments: registry });
  }

  has(name: string): boolean {
    return Object.hasOwn(this.registry, name);
  }

  async emptySnapshot(name: string): Promise<JsonValue> {
    if (!this.snapshots.has(name)) {
      await using sandbox = await this.backend.start({ environments: [name], label: `shape-${name}` });
      this.snapshots.set(name, (await sandbox.snapshot())[name] ?? null);
    }
    return this.snapshots.get(name)!;
  }

  async describe(name: string): Promise<EnvironmentShape> {
    const definition = this.registry[name];
    if (!definition) throw new Error(`environment "${name}" is not in the sandbox registry (known: ${Object.keys(this.registry).sort().join(', ')})`);
    return {
      name: definition.name,
      description: definition.description,
      externalChannels: [...definition.externalChannels],
      tools: definition.tools.map((t) => ({ name: t.name, description: t.description, input: toolJsonSchema(t.input) })),
      initOperations: definition.operations.map((o) => ({ op: `${definition.name}.${o.name}`, description: o.description, args: toolJsonSchema(o.input) })),
      emptySnapshot: await this.emptySnapshot(name),
    };
  }

  /** The other environments a goal could also span, in brief (name, what it is, its tools' names). */
  others(except: string): Array<{ name: string; description: string; tools: string[] }> {
    return Object.values(this.registry)
      .filter((d) => d.name !== except)
      .map((d) => ({ name: d.name, description: d.description, tools: d.tools.map((t) => t.name) }));
  }
}
