import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentAdapter } from '../adapters/adapter.js';
import { referenceAgent } from '../adapters/reference-agent.js';
import type { ControlAgent } from '../control/control.js';
import { benignUser } from '../control/benign-user.js';
import { scriptedAdversary } from '../control/scripted-adversary.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import type { EnvironmentDefinition, AnyEnvironmentDefinition } from '../sandbox/environment.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';
import type { AdversarySpec, AgentSpec, UserSpec, VeraRuntimeConfig } from './options.js';
import { providedModule } from './user-modules.js';

/** Turns the JSON options a worker receives into live parts; one of each per worker. */
const agents = new Map<string, Promise<AgentAdapter>>();
/** Module agents by the namespace they came from: a module re-imported in watch mode makes a new agent. */
const moduleAgents = new WeakMap<object, Map<string, Promise<AgentAdapter>>>();

export function resolveAgent(spec: AgentSpec, root: string): Promise<AgentAdapter> {
  const key = JSON.stringify(spec);
  const namespace = spec.type === 'module' ? providedModule(modulePath(spec.path, root)) : undefined;
  let cache = agents;
  if (namespace) {
    cache = moduleAgents.get(namespace) ?? new Map();
    moduleAgents.set(namespace, cache);
  }
  let agent = cache.get(key);
  if (!agent) {
    agent = loadAgent(spec, root);
    cache.set(key, agent);
    agent.catch(() => cache.delete(key));
  }
  return agent;
}

/**
 * The agent's id as its adapter will report it, from the options alone — for records of runs
 * that fail before the agent exists (its module does not load, the sandbox does not start).
 */
export function configuredAgentId(spec: AgentSpec): string {
  switch (spec.type) {
    case 'module':
      return `module:${spec.path}`;
    case 'mcp-cli':
      return `mcp-cli:${spec.name}`;
    case 'claude-code':
      return `claude-code:${spec.model ?? 'default'}`;
    default:
      return `${spec.type}:${spec.model}`;
  }
}

/**
 * The agent for a run: the configured one, or — when it cannot be loaded — one whose start
 * fails with that error, so the run ends as an error record carrying the configured id.
 */
export async function agentForRun(spec: AgentSpec, root: string): Promise<AgentAdapter> {
  try {
    return await resolveAgent(spec, root);
  } catch (error) {
    return {
      id: configuredAgentId(spec),
      start: () => Promise.reject(error instanceof Error ? error : new Error(String(error))),
    };
  }
}

function modulePath(path: string, root: string): string {
  return isAbsolute(path) ? path : resolve(root, path);
}

/**
 * A user module: as the case module imported it through Vite, else (outside Vitest: the CLI,
 * `runCase` scripts) imported here — natively, or through Vite's module runner for TypeScript,
 * which Node 20 cannot load itself.
 */
async function importUserModule(path: string, root: string): Promise<Record<string, unknown>> {
  const file = modulePath(path, root);
  const provided = providedModule(file);
  if (provided) return provided;
  if (/\.[mc]?tsx?$/.test(file)) {
    const { runnerImport } = await import('vite');
    return (await runnerImport<Record<string, unknown>>(file, { root, logLevel: 'silent' })).module;
  }
  return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as Record<string, unknown>;
}

async function loadAgent(spec: AgentSpec, root: string): Promise<AgentAdapter> {
  if (spec.type === 'reference') {
    return referenceAgent({
      model: spec.model,
      ...(spec.baseURL ? { baseURL: spec.baseURL } : {}),
      ...(spec.apiKeyEnv ? { apiKey: requireEnv(spec.apiKeyEnv) } : {}),
      ...(spec.systemPrompt ? { systemPrompt: spec.systemPrompt } : {}),
      ...(spec.maxToolRounds ? { maxToolRounds: spec.maxToolRounds } : {}),
      ...(spec.temperature !== undefined ? { temperature: spec.temperature } : {}),
      ...(spec.maxRetries !== undefined ? { maxRetries: spec.maxRetries } : {}),
      ...(spec.mcpTransport ? { mcpTransport: spec.mcpTransport } : {}),
    });
  }
  if (spec.type === 'python') {
    const { type: _, ...options } = spec;
    // Relative paths are the project's, as a module agent's path is.
    const { pythonAgent } = await import('../adapters/python-agent.js');
    return pythonAgent({
      ...options,
      ...(options.python && !isAbsolute(options.python) && options.python.includes('/') ? { python: resolve(root, options.python) } : {}),
      pythonPath: (options.pythonPath ?? ['.']).map((p) => resolve(root, p)),
    });
  }
  if (spec.type !== 'module') return cliAgent(spec);
  const exported = (await importUserModule(spec.path, root)).default;
  const adapter = typeof exported === 'function' ? await (exported as (o: unknown) => unknown)(spec.options ?? {}) : exported;
  if (!adapter || typeof (adapter as AgentAdapter).start !== 'function' || typeof (adapter as AgentAdapter).id !== 'string') {
    throw new Error(`${spec.path}: the default export must be an AgentAdapter ({ id, start }) or a function returning one`);
  }
  return adapter as AgentAdapter;
}

/** The real agent CLIs: options pass through as they are (adapters/*-agent.ts document them). */
async function cliAgent(spec: Exclude<AgentSpec, { type: 'reference' | 'module' | 'python' }>): Promise<AgentAdapter> {
  const { type, ...options } = spec;
  const adapters = await import('../adapters/cli-agents.js');
  switch (type) {
    case 'codex':
      return adapters.codexAgent(options as Parameters<typeof adapters.codexAgent>[0]);
    case 'claude-code':
      return adapters.claudeCodeAgent(options as Parameters<typeof adapters.claudeCodeAgent>[0]);
    case 'openclaw':
      return adapters.openClawAgent(options as Parameters<typeof adapters.openClawAgent>[0]);
    case 'opencode':
      return adapters.openCodeAgent(options as Parameters<typeof adapters.openCodeAgent>[0]);
    case 'kilo':
      return adapters.kiloAgent(options as Parameters<typeof adapters.kiloAgent>[0]);
    case 'gemini-cli':
      return adapters.geminiCliAgent(options as Parameters<typeof adapters.geminiCliAgent>[0]);
    case 'qwen-code':
      return adapters.qwenCodeAgent(options as Parameters<typeof adapters.qwenCodeAgent>[0]);
    case 'hermes':
      return adapters.hermesAgent(options as Parameters<typeof adapters.hermesAgent>[0]);
    case 'mcp-cli':
      return adapters.mcpCliAgent(options as Parameters<typeof adapters.mcpCliAgent>[0]);
  }
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`the agent's API key variable ${name} is not set`);
  return value;
}

function controlModel(spec: Exclude<UserSpec, 'scripted'>) {
  return {
    model: spec.model,
    ...(spec.baseURL ? { baseURL: spec.baseURL } : {}),
    ...(spec.apiKeyEnv ? { apiKey: requireEnv(spec.apiKeyEnv) } : {}),
    ...(spec.temperature !== undefined ? { temperature: spec.temperature } : {}),
    ...(spec.maxRetries !== undefined ? { maxRetries: spec.maxRetries } : {}),
  };
}

/** The LLM adversary and user load only when configured: the scripted ones are the default, and the LLM ones bring their model client, schemas and prompts. */
export async function resolveAdversary(spec: AdversarySpec): Promise<ControlAgent> {
  if (spec === 'scripted') return scriptedAdversary();
  const { llmAdversary } = await import('../control/llm-adversary.js');
  return llmAdversary({
    ...controlModel(spec),
    ...(spec.strategies ? { strategies: spec.strategies } : {}),
    ...(spec.maxResultChars ? { maxResultChars: spec.maxResultChars } : {}),
  });
}

export async function resolveUser(spec: UserSpec): Promise<ControlAgent> {
  if (spec === 'scripted') return benignUser();
  const { llmUser } = await import('../control/llm-user.js');
  return llmUser(controlModel(spec));
}

let backend: { key: unknown[]; backend: Promise<SandboxBackend> } | undefined;
export function resolveBackend(config: VeraRuntimeConfig): Promise<SandboxBackend> {
  // Keyed by the environment modules' namespaces (watch mode re-imports a changed one) the egress allow-list and the limits.
  const key = [
    ...config.options.environments.map((path) => providedModule(modulePath(path, config.root))),
    ...config.options.egress.allow,
    JSON.stringify(config.options.limits),
  ];
  if (backend && backend.key.length === key.length && backend.key.every((k, i) => k === key[i])) return backend.backend;
  const started = (async () => {
    if (config.options.sandbox === 'container') {
      if (config.options.environments.length > 0) {
        throw new Error(
          `vera: sandbox 'container' hosts the built-in environments only; your environments (${config.options.environments.join(', ')}) need sandbox 'in-process'`,
        );
      }
      const { ContainerBackend } = await import('../sandbox/backends/container-backend.js');
      const container = config.options.container ?? {};
      const mounts = (container.mounts ?? []).map((m) => ({ ...m, source: resolve(config.root, m.source) }));
      // A CLI agent runs inside the container: its install folder goes in, read-only, unless
      // the user mounted it already.
      const agentType = config.options.agent.type;
      if (agentType !== 'reference' && agentType !== 'module') {
        const { agentInstallMount } = await import('../adapters/agent-programs.js');
        const agents = agentInstallMount();
        if (existsSync(agents.source) && !mounts.some((m) => m.target === agents.target)) mounts.push(agents);
      }
      return new ContainerBackend({ ...container, mounts });
    }
    const environments = await loadEnvironments(config.options.environments, config.root);
    if (config.options.shell === 'bubblewrap' && !environments.shell) {
      const { createBubblewrapRunner, createShellEnvironment } = await import('../sandbox/environments/shell/index.js');
      environments.shell = createShellEnvironment({ runner: createBubblewrapRunner({ limits: config.options.limits }) });
    }
    return new InProcessBackend({
      environments,
      programs: config.options.unconfined ? 'unconfined' : 'bubblewrap',
      egressAllow: config.options.egress.allow,
      limits: config.options.limits,
    });
  })();
  backend = { key, backend: started };
  return started;
}

function isEnvironment(value: unknown): value is AnyEnvironmentDefinition {
  const v = value as EnvironmentDefinition | null;
  return !!v && typeof v === 'object' && typeof v.name === 'string' && Array.isArray(v.tools) && typeof v.create === 'function';
}

/** User environments, by name, from the modules listed in `environments`. */
export async function loadEnvironments(paths: readonly string[], root: string): Promise<Record<string, AnyEnvironmentDefinition>> {
  const out: Record<string, AnyEnvironmentDefinition> = {};
  for (const path of paths) {
    const mod = await importUserModule(path, root);
    const found = Object.values(mod).filter(isEnvironment);
    if (found.length === 0) throw new Error(`${path}: exports no environment definitions ({ name, tools, operations, create })`);
    for (const env of found) out[env.name] = env;
  }
  return out;
}
