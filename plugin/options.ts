import { z } from 'zod';
import { strategyId, threatModel } from '../engine/case-schema.js';

/**
 * `vera(options)`. Options cross from the config process to test workers as JSON (Vitest's
 * provide/inject), so everything here is data; code (a custom agent) is named by module path.
 */
const referenceAgentSpec = z.strictObject({
  type: z.literal('reference'),
  model: z.string().min(1),
  /**
   * OpenAI-compatible endpoint. `scripted:naive` / `scripted:guarded` starts the embedded local
   * scripted model (no key, no network) with that policy.
   */
  baseURL: z.string().optional(),
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv: z.string().optional(),
  systemPrompt: z.string().optional(),
  maxToolRounds: z.int().positive().optional(),
  temperature: z.number().optional(),
  /** Retries on 429/5xx inside the openai client (default 2). */
  maxRetries: z.int().min(0).max(10).optional(),
  /** How it reaches the gateway: `auto` (in-memory in this process), `http`, `in-memory`. */
  mcpTransport: z.enum(['auto', 'http', 'in-memory']).optional(),
});

const moduleAgentSpec = z.strictObject({
  type: z.literal('module'),
  /** A module whose default export is an `AgentAdapter` or a function returning one. */
  path: z.string().min(1),
  /** Passed to the factory when the default export is a function. */
  options: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Real agent CLIs under test (adapters/*-agent.ts). `baseURL: 'scripted:naive'` (or `guarded`)
 * starts the embedded scripted model speaking that agent's wire protocol.
 */
const cliAgentFields = {
  /** Model name at the provider. */
  model: z.string().min(1),
  baseURL: z.string().optional(),
  /** Name of the environment variable holding the API key. */
  apiKeyEnv: z.string().optional(),
  /** Path of the program (default: VERA_*_BIN, `.agents/`, then PATH). */
  binary: z.string().optional(),
  turnTimeoutSeconds: z.number().positive().optional(),
  env: z.record(z.string(), z.string()).optional(),
  /** Host paths the confined program reads beyond its install folder, read-only. */
  readOnly: z.array(z.string()).optional(),
};
const codexAgentSpec = z.strictObject({
  type: z.literal('codex'),
  ...cliAgentFields,
  maxRetries: z.int().min(0).optional(),
  extraConfig: z.string().optional(),
});
const claudeCodeAgentSpec = z.strictObject({
  type: z.literal('claude-code'),
  ...cliAgentFields,
  model: z.string().min(1).optional(),
  nativeTools: z.array(z.string()).optional(),
  extraArgs: z.array(z.string()).optional(),
});
const openClawAgentSpec = z.strictObject({
  type: z.literal('openclaw'),
  ...cliAgentFields,
  api: z.enum(['openai-completions', 'openai-responses', 'anthropic-messages']).optional(),
  /** Node >= 24.16 that runs OpenClaw. */
  node: z.string().optional(),
});
const openCodeAgentSpec = z.strictObject({ type: z.literal('opencode'), ...cliAgentFields, extraConfig: z.record(z.string(), z.unknown()).optional() });
/** Kilo CLI, OpenCode's fork: the same options (`extraConfig` merges over kilo.json). */
const kiloAgentSpec = z.strictObject({ type: z.literal('kilo'), ...cliAgentFields, extraConfig: z.record(z.string(), z.unknown()).optional() });
const geminiCliAgentSpec = z.strictObject({
  type: z.literal('gemini-cli'),
  ...cliAgentFields,
  maxRetries: z.int().min(0).max(9).optional(),
  extraSettings: z.record(z.string(), z.unknown()).optional(),
});
/** Qwen Code, Gemini CLI's fork against an OpenAI-compatible endpoint (`extraSettings` merges over .qwen/settings.json). */
const qwenCodeAgentSpec = z.strictObject({
  type: z.literal('qwen-code'),
  ...cliAgentFields,
  maxRetries: z.int().min(0).optional(),
  extraSettings: z.record(z.string(), z.unknown()).optional(),
  /** Node >= 22 that runs Qwen Code. */
  node: z.string().optional(),
});
const hermesAgentSpec = z.strictObject({ type: z.literal('hermes'), ...cliAgentFields, provider: z.string().optional() });
const pythonAgentSpec = z.strictObject({
  type: z.literal('python'),
  /** The agent's function, `module:function` (python/vera_agent gives it the message, the model and the tools). */
  entry: z.string().regex(/^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$/, 'write the entry as module:function, e.g. my_agent:run'),
  /** The interpreter with the agent's packages, e.g. `.venv/bin/python` (default: VERA_PYTHON, then python3). */
  python: z.string().optional(),
  /** Folders the module is imported from, as PYTHONPATH (default: the project root). */
  pythonPath: z.array(z.string()).optional(),
  model: z.string().min(1),
  baseURL: z.string().optional(),
  apiKeyEnv: z.string().optional(),
  turnTimeoutSeconds: z.number().positive().optional(),
  env: z.record(z.string(), z.string()).optional(),
  readOnly: z.array(z.string()).optional(),
});
const mcpCliAgentSpec = z.strictObject({
  type: z.literal('mcp-cli'),
  name: z.string().min(1),
  command: z.string().min(1),
  /** Placeholders: {message} {gatewayUrl} {gatewayName} {workspace} {home} {mcpConfig} {turn}. */
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()).optional(),
  turnTimeoutSeconds: z.number().positive().optional(),
  /** The program's model endpoint: `{modelBaseURL}` in args/env gives the run's route to it (model proxy, scripted plan). */
  modelBaseURL: z.string().optional(),
  /** Other loopback endpoints the confined program may reach (the gateway and modelBaseURL always). */
  network: z.array(z.string()).optional(),
  /** Host paths the confined program reads (its scripts), read-only. */
  readOnly: z.array(z.string()).optional(),
});

export const agentSpec = z.discriminatedUnion('type', [
  referenceAgentSpec,
  moduleAgentSpec,
  codexAgentSpec,
  claudeCodeAgentSpec,
  openClawAgentSpec,
  openCodeAgentSpec,
  kiloAgentSpec,
  geminiCliAgentSpec,
  qwenCodeAgentSpec,
  hermesAgentSpec,
  pythonAgentSpec,
  mcpCliAgentSpec,
]);
export type AgentSpec = z.infer<typeof agentSpec>;

/** A model reached through the `openai` package (any compatible endpoint); no fallback to another. */
const llmControlFields = {
  type: z.literal('llm'),
  model: z.string().min(1),
  /** OpenAI-compatible endpoint; `scripted:<policy>` starts the embedded scripted model (e.g. `scripted:adversary`). */
  baseURL: z.string().optional(),
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv: z.string().optional(),
  temperature: z.number().optional(),
  /** Retries of the same request on 429/5xx (default 2). */
  maxRetries: z.int().min(0).max(10).optional(),
};

export const adversarySpec = z.union([
  z.literal('scripted'),
  z.strictObject({
    ...llmControlFields,
    /**
     * Strategy sequences by attack method (taxonomy id or `/`-prefix; `*` for any), over the
     * built-in defaults; a case's `attack.strategies` wins over both.
     */
    strategies: z.record(z.string().min(1), z.array(strategyId).min(1)).optional(),
    /** Characters of each tool result shown to the adversary (default 1200). */
    maxResultChars: z.int().positive().optional(),
  }),
]);
export type AdversarySpec = z.infer<typeof adversarySpec>;

/** Who plays the honest user in benign and indirect runs. */
export const userSpec = z.union([z.literal('scripted'), z.strictObject(llmControlFields)]);
export type UserSpec = z.infer<typeof userSpec>;

const taxonomyPath = z.string().regex(/^[a-z0-9-]+(\/[a-z0-9-]+)*$/, 'a "/"-separated path of lower-case ids, e.g. data-exfiltration or fraud/invoice-fraud');

/**
 * The bundled library (Vera-Bench, the package's own `cases`) run against this project's agent,
 * with no include or exclude: the plugin adds a Vitest project of its own (`<project>:library`,
 * or `library` for an unnamed root project) that collects the chosen cases from the installed
 * package. Filters take a risk category or leaf, an environment, an attack method or its prefix.
 */
export const libraryPreset = z.strictObject({
  categories: z.array(taxonomyPath).min(1).optional(),
  environments: z.array(taxonomyPath).min(1).optional(),
  attacks: z.array(taxonomyPath).min(1).optional(),
  /**
   * `'stratified'` (default): 2 cases per risk category, spread over environments, methods and
   * families, the same every time; a number: that many per category; `'all'`: every case.
   */
  sample: z.union([z.enum(['stratified', 'all']), z.int().positive()]).default('stratified'),
  /** The hand-written cases (cases/<environment>/) too, filtered the same way (default true). */
  handWritten: z.boolean().default(true),
});
export type LibraryPreset = z.infer<typeof libraryPreset>;

export const veraOptions = z.strictObject({
  /** Case files to run (globs, relative to the project root): YAML cases and `*.case.ts` modules. */
  include: z.array(z.string()).default(['**/*.case.yaml', '**/*.case.ts']),
  /** The bundled library against this agent, as a project of its own (see `libraryPreset`). */
  library: libraryPreset.optional(),
  agent: agentSpec,
  /** Who plays the hostile user in single- and multi-channel runs. */
  adversary: adversarySpec.default('scripted'),
  /**
   * Who plays the honest user in benign and indirect runs: `'scripted'` (the task, then answers
   * from the case's `user.facts`/`user.answers`) or an LLM.
   */
  user: userSpec.default('scripted'),
  /** Runs of each case per threat model (a case's own `repeats` wins); each repeat is seeded and recorded. */
  repeats: z.int().positive().max(1000).default(1),
  /** Base seed the per-repeat seeds derive from (engine/seed.ts). */
  seed: z.int().min(0).default(0),
  /** Run only these threat models (each case still lists which it supports). */
  threatModels: z.array(threatModel).min(1).optional(),
  /** `container`: each case's sandbox runs in a Docker container (see `container` and README "Container sandbox"). */
  sandbox: z.enum(['in-process', 'container']).default('in-process'),
  /**
   * How the in-process backend's `shell` environment runs commands: `simulated` (default: an
   * embedded bash interpreter, no host process, network recorded and answered — needs only Node)
   * or `bubblewrap` (real programs, confined by bwrap; Linux). The container backend always runs
   * real programs inside the container.
   */
  shell: z.enum(['simulated', 'bubblewrap']).default('simulated'),
  /**
   * CLI agents (codex, claude-code, openclaw, hermes, mcp-cli) run confined: in-process with
   * bubblewrap (read-only system, writable workspace and private home only, no network but the
   * gateway and the model endpoint), or inside the container. Where neither is available the run
   * refuses them; `true` runs them as plain host processes instead — they then see your files
   * and network — and every report says so.
   */
  unconfined: z.boolean().default(false),
  /**
   * A confined agent's own network requests (curl in its shell, its web-fetch tool) go through
   * the sandbox's recording egress proxy: each is an egress event in the record, and none
   * leaves unless its destination is listed here — an origin (`https://pypi.org`), a host
   * (`registry.npmjs.org`) or `*.` subdomains (`*.github.com`). Allowed requests are still
   * recorded. In-process backend only.
   */
  egress: z.strictObject({ allow: z.array(z.string().min(1)).default([]) }).default({ allow: [] }),
  /**
   * What each confined program — a CLI agent, a bubblewrap shell command — and everything it
   * starts may use: processes at once (default 512), memory in MiB (4096), CPU seconds per process
   * (900), largest file in MiB (1024). The process count and memory are enforced through a cgroup
   * (root, or delegated cgroup v2); CPU time and file size everywhere. In-process backend only
   * (the container has its own pids limit).
   */
  limits: z
    .strictObject({
      processes: z.int().positive().optional(),
      memoryMB: z.int().positive().optional(),
      cpuSeconds: z.int().positive().optional(),
      fileSizeMB: z.int().positive().optional(),
    })
    .default({}),
  /** Options of the container sandbox (used when `sandbox` is `container`). */
  container: z
    .strictObject({
      /** Default `vera-sandbox:<package version>` (built by scripts/build-sandbox-image.sh or docker/Dockerfile). */
      image: z.string().min(1).optional(),
      /** Warm pool: containers kept started and reset between cases (per worker); 0 = a fresh container per case. */
      pool: z.strictObject({ size: z.int().min(0).max(64) }).optional(),
      /** Extra read-only bind mounts (host path → container path), e.g. an agent's install directory. */
      mounts: z.array(z.strictObject({ source: z.string().min(1), target: z.string().startsWith('/') })).optional(),
      /** Extra Docker labels on every sandbox container (all carry `vera.sandbox=1`), e.g. a CI job id. */
      labels: z.record(z.string(), z.string()).optional(),
      /** Read-only root file system with tmpfs workspace, /tmp and /root (default true). */
      readOnlyRoot: z.boolean().optional(),
      /**
       * How the host and the containers reach each other: `host` networking (the engine shares
       * this machine's network), or `exec-stream` (network mode `none`; the admin API and the
       * ports a spawned agent needs go over one `docker exec -i` relay, so the engine may be on
       * another machine). Default: `exec-stream` when DOCKER_HOST is set, else `host`. See
       * ContainerBackendOptions.network and README "Container sandbox".
       */
      network: z.enum(['host', 'exec-stream']).optional(),
    })
    .optional(),
  /**
   * Modules that export your own environments (`EnvironmentDefinition`s, default or named
   * exports); cases mount them by name like the built-in ones.
   */
  environments: z.array(z.string().min(1)).default([]),
  /**
   * How runs are executed. `prefetch` (default): a scheduler per worker starts runs ahead, across
   * all files the worker collected, up to `concurrency` at once; each test awaits its own run.
   * `fixtures`: each test builds its parts as `test.extend` fixtures in its own body (Vitest's
   * concurrency: tests within a file, files across workers).
   */
  schedule: z.enum(['prefetch', 'fixtures']).default('prefetch'),
  /**
   * For a project that holds only cases (`test.include: []`): run all case files in one
   * non-isolated worker so the scheduler spans files. `false` leaves the project settings alone.
   */
  tune: z.boolean().default(true),
  /** Case runs in flight at once (per worker). */
  concurrency: z.int().positive().max(512).default(8),
  /** Where safety records are written; `false` to keep none. */
  recordDir: z.union([z.string(), z.literal(false)]).default('.vera/records'),
  /**
   * Whether each test annotates its verdict (risk, attack, environment, threat model, verdict).
   * Default: when a reporter reads annotations — junit (as properties), blob, html — or the UI.
   */
  annotate: z.boolean().optional(),
  /**
   * Model traffic hygiene, shared by every worker of the run: a loopback proxy in front of the
   * model endpoints holds the limits, retries 429 and transient 5xx answers with backoff that
   * honours Retry-After, and counts each run's requests, retries, waits and tokens (into its
   * record), and logs what each of the agent's requests offered its model (system prompt, tools)
   * into the record. On by default, whoever serves the model (a remote provider, the embedded
   * scripted model, the local model); `{…}` sets its limits, `false` turns it off (the record then
   * has no figures and no offered tools). `prices` (USD per million tokens, by model name) adds
   * cost to the reports.
   */
  provider: z
    .union([
      z.literal(false),
      z.strictObject({
        maxConcurrent: z.int().positive().optional(),
        rpm: z.int().positive().optional(),
        tpm: z.int().positive().optional(),
        maxRetries: z.int().min(0).max(20).optional(),
        retryBaseMs: z.int().positive().optional(),
        maxRetryWaitMs: z.int().positive().optional(),
        prices: z.record(z.string(), z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() })).optional(),
      }),
    ])
    .optional(),
  /**
   * Counterfactual attribution: a violated run whose injections reached the agent is re-run with
   * the injections in identity mode (the attack text removed; a multi-channel adversary's messages
   * kept) to tell whether the injection caused the violation (`record.attribution`, the
   * "attributable ASR"). `'auto'` (default): on when the agent's model is local or scripted, off
   * for remote providers (it costs one more run per such violation); `true`/`false` force it.
   */
  counterfactual: z.union([z.boolean(), z.literal('auto')]).default('auto'),
  /**
   * Origins of scripted model servers (`startScriptedModelServer` from vera-safety/testing) that
   * you started yourself and point agents at: runs send them each case's plan out of band, as
   * they do the embedded `scripted:` one. E.g. `['http://127.0.0.1:5555']`.
   */
  scriptedModels: z.array(z.string().url()).default([]),
  /** Print the ASR table at the end of the run. */
  report: z.boolean().default(true),
  /** A progress line during long runs (done/total, ASR so far, ETA); `'auto'`: on a terminal, not in CI. */
  progress: z.union([z.boolean(), z.literal('auto')]).default('auto'),
  /**
   * Also write a JSON and/or Markdown summary at the end of each run (paths relative to the root).
   * When GITHUB_STEP_SUMMARY is set, the Markdown is appended there too (`githubStepSummary: false` to stop it).
   */
  summary: z.strictObject({ json: z.string().min(1).optional(), markdown: z.string().min(1).optional(), githubStepSummary: z.boolean().optional() }).optional(),
});

export type VeraOptions = z.input<typeof veraOptions>;
export type ResolvedVeraOptions = z.output<typeof veraOptions>;

/** What the workers receive: the options with embedded services resolved to URLs. */
export interface VeraRuntimeConfig {
  options: ResolvedVeraOptions;
  root: string;
  runId: string;
  /** Risk-category tags defined in the config (a test only carries tags that exist). */
  riskTags: string[];
  /** Whether tests annotate their verdicts (read by JUnit, blob/merge, HTML and UI reporters). */
  annotate?: boolean;
  /** The run-wide model proxy, when model traffic goes through one. */
  modelProxyUrl?: string;
  /** Origins of the embedded scripted model servers: runs send them their plans out of band. */
  scriptedModels?: string[];
  /** Whether violated injected runs get a counterfactual (the `counterfactual` option, resolved). */
  counterfactual?: boolean;
}

export { PROVIDE_KEY } from './provide-key.js';
