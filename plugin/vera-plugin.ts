import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
// Brings in Vitest's augmentation of Vite's Plugin type (the `configureVitest` hook).
import type {} from 'vitest/config';
import type { TestProject, Vitest } from 'vitest/node';
import type { TestProjectConfiguration } from 'vitest/config';
import { threatModels } from '../engine/case-schema.js';
import { newRunId } from '../engine/record-writer.js';
import { AsrReporter } from '../reporters/asr-reporter.js';
import { libraryPreset, PROVIDE_KEY, veraOptions, type ResolvedVeraOptions, type VeraOptions, type VeraRuntimeConfig } from './options.js';
import { startModelProxy, type StartedModelProxy } from '../provider/model-proxy.js';
import { isLocalModelURL, startLocalModel } from '../provider/local-model/endpoint.js';
import type { StartedLocalModel } from '../provider/local-model/server.js';
import { RunPlanner } from './run-planner.js';
import { installMainProcessCleanup, sweepStaleRecordTemps } from '../sandbox/backends/scratch-dirs.js';
import { workspaceRoot } from '../sandbox/backends/in-process-backend.js';
import { CaseValidation } from '../runner/case-validation.js';
import { CASE_FILE, CaseSources } from './case-sources.js';
import { CASE_SOURCE_QUERY } from './case-module.js';
import { loadEnvironments } from './resolve-parts.js';
import { transformCaseFile } from './transform.js';
import { selectLibraryCases } from './library-preset.js';
import { userModulePaths } from './user-modules.js';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The runtime module generated tests import: the .ts source in this repo, the .js build when installed. */
function runtimeModulePath(): string {
  const here = fileURLToPath(import.meta.url);
  const ts = here.replace(/vera-plugin\.[jt]s$/, 'runtime.ts');
  return here.endsWith('.ts') && existsSync(ts) ? ts : here.replace(/vera-plugin\.[jt]s$/, 'runtime.js');
}

type OptionIssue = { path: PropertyKey[]; message: string; code?: string; errors?: OptionIssue[][] };

/** A union's issue, told through the branch that got furthest (e.g. `adversary.strategies.*.0`, not `adversary: Invalid input`). */
function optionIssues(issue: OptionIssue, base: PropertyKey[] = []): Array<{ path: PropertyKey[]; message: string }> {
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors?.length) {
    const depth = (branch: OptionIssue[]) => Math.max(...branch.map((i) => i.path.length));
    const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    if (depth(best) > 0) return best.flatMap((i) => optionIssues(i, path));
  }
  return [{ path, message: issue.message }];
}

function parseOptions(options: VeraOptions): ResolvedVeraOptions {
  const parsed = veraOptions.safeParse(options);
  if (!parsed.success) {
    const issues = parsed.error.issues.flatMap((i) => optionIssues(i as OptionIssue));
    const detail = issues.map((i) => `  ${i.path.map(String).join('.') || '(options)'}: ${i.message}`).join('\n');
    throw new Error(`vera(): invalid options\n${detail}`);
  }
  return parsed.data;
}

/** What the embedded servers of a run are: the scripted models' origins, the local models' slots. */
export interface EmbeddedModels {
  scripted: string[];
  /** Requests the local models serve at once, summed (0: no local model). */
  localSlots: number;
}

/**
 * Starts the embedded scripted model when a part points at `scripted:<policy>`, and the packaged
 * model when it points at `local:<name>` (one server per URL, shared by the agent, the adversary
 * and the user); returns the options with the URLs to use.
 */
async function resolveEmbeddedModel(
  options: ResolvedVeraOptions,
  vitest: Vitest,
  started: EmbeddedModels = { scripted: [], localSlots: 0 },
): Promise<ResolvedVeraOptions> {
  const locals = new Map<string, Promise<StartedLocalModel>>();
  const local = async <T extends { baseURL?: string | undefined }>(part: T & { baseURL: string }, origin: boolean, wire: string | undefined): Promise<T> => {
    let server = locals.get(part.baseURL);
    if (!server) {
      server = startLocalModel(part.baseURL);
      locals.set(part.baseURL, server);
      const ready = await server;
      vitest.onClose(() => ready.close());
      started.localSlots += ready.slots;
    }
    const ready = await server;
    if (!wire) return { ...part, baseURL: ready.url };
    // The local server speaks Chat Completions; an agent on another wire (Codex's Responses API,
    // Claude Code's Messages, Gemini's API) reaches it through the scripted server's wire
    // adapters, whose policy only forwards each request to the model and its reply back.
    const [{ startScriptedModelServer }, { chatCompletionsPolicy }] = await Promise.all([
      import('../testing/scripted-model-server.js'),
      import('../testing/chat-completions-policy.js'),
    ]);
    const bridge = await startScriptedModelServer({ policy: chatCompletionsPolicy({ baseURL: ready.url, model: ready.name }), recordRequests: false });
    vitest.onClose(() => bridge.close());
    return { ...part, baseURL: origin ? bridge.origin : bridge.url };
  };
  // `origin`: Claude Code's Anthropic client appends /v1 itself (Gemini CLI's client /v1beta), so it gets the server's origin.
  const embedded = async <T extends { baseURL?: string | undefined }>(part: T, origin = false, wire?: string): Promise<T> => {
    if (isLocalModelURL(part.baseURL)) return local(part as T & { baseURL: string }, origin, wire);
    if (!part.baseURL?.startsWith('scripted:')) return part;
    // `scripted:<policy>[?latency=<ms>]`: the latency simulates a provider's response time.
    const [policy, query = ''] = part.baseURL.slice('scripted:'.length).split('?');
    const latencyMs = Number(new URLSearchParams(query).get('latency') ?? 0);
    if (!Number.isFinite(latencyMs) || latencyMs < 0) throw new Error(`vera(): bad latency in ${part.baseURL}`);
    const { startScriptedModelServer } = await import('../testing/scripted-model-server.js');
    // Nothing reads its requests: kept, they were every prompt of the run (the whole library: GBs).
    const server = await startScriptedModelServer({ policy: policy as 'naive' | 'guarded' | 'adversary', latencyMs, recordRequests: false });
    vitest.onClose(() => server.close());
    // Runs in the workers send it their plans (engine/scripted-plan.ts): they must know it is one.
    started.scripted.push(server.origin);
    return { ...part, baseURL: origin ? server.origin : server.url };
  };
  // One scripted server speaks every wire (Chat Completions, Responses, Anthropic Messages, Gemini), so
  // the CLI agents (codex, claude-code, openclaw, gemini-cli, hermes) use it like the reference agent.
  const agent =
    'baseURL' in options.agent
      ? await embedded(options.agent, options.agent.type === 'claude-code' || options.agent.type === 'gemini-cli', foreignWire(options.agent))
      : options.agent;
  // The LLM adversary and LLM user may use the embedded scripted model too (e.g. `scripted:adversary`).
  const adversary = options.adversary === 'scripted' ? options.adversary : await embedded(options.adversary);
  const user = options.user === 'scripted' ? options.user : await embedded(options.user);
  return { ...options, agent, adversary, user };
}

/** The wire an agent speaks when it is not Chat Completions. */
function foreignWire(agent: ResolvedVeraOptions['agent']): string | undefined {
  if (agent.type === 'codex') return 'the Responses API';
  if (agent.type === 'claude-code') return 'Anthropic Messages';
  if (agent.type === 'gemini-cli') return 'the Gemini API';
  if (agent.type === 'openclaw' && agent.api && agent.api !== 'openai-completions') return agent.api;
  return undefined;
}

/**
 * Top-level risk categories of the cases in the project, defined as tags (`risk:<category>`) —
 * read off each file's text, not parsed: the tags must exist before any worker collects a test,
 * and parsing every case file of the project here (10 s and 340 MB for the library) is paid even
 * by a run of one shard or one file. A `risk:` key the scan misses only leaves that case's tests
 * without the tag (plugin/test-plan.ts tags a test only with a defined category); one it finds in
 * other text only defines a tag no test carries.
 */
async function riskCategories(project: TestProject): Promise<string[]> {
  const { testFiles } = await project.globTestFiles();
  const risks = new Set<string>();
  await Promise.all(
    testFiles
      .filter((f) => CASE_FILE.test(f))
      .map(async (file) => {
        const text = await readFile(file, 'utf8').catch(() => '');
        for (const m of text.matchAll(RISK_KEY)) risks.add(m[1]!);
      }),
  );
  return [...risks].sort();
}

/** A `risk:` key (YAML block or flow mapping, or a TypeScript object literal) and its category, the part before `/`. */
const RISK_KEY = /(?:^[ \t]*|[{,][ \t]*)risk:[ \t]*["']?([a-z0-9][a-z0-9_.-]*)\//gim;

const reporterAdded = new WeakSet<Vitest>();
/** Each Vera project of a run and the agent it tests (the spec as JSON): a run of two agents names its tests by project. */
const agentsOfRun = new WeakMap<Vitest, Map<string, string>>();

/** The project's name for its test names when the run's Vera projects test more than one agent; else none. */
function projectInTestNames(vitest: Vitest | undefined, project: string): string | undefined {
  const agents = vitest && agentsOfRun.get(vitest);
  return agents && new Set(agents.values()).size > 1 ? project || undefined : undefined;
}
const proxies = new WeakMap<Vitest, Promise<StartedModelProxy>>();

/**
 * Whether any model endpoint is a remote provider — where rate limits, transient errors and costs
 * live. The embedded scripted model and local servers (127.0.0.1, localhost) are not: counterfactual
 * re-runs are then free, and on by default.
 */
export function talksToRemoteProvider(options: ResolvedVeraOptions): boolean {
  const remote = (baseURL: string | undefined) => {
    const url = baseURL ?? process.env.OPENAI_BASE_URL;
    if (!url) return true; // the provider's own API
    if (url.startsWith('scripted:') || isLocalModelURL(url)) return false;
    try {
      return !['127.0.0.1', 'localhost', '[::1]', '::1'].includes(new URL(url).hostname);
    } catch {
      return true;
    }
  };
  const real = (part: { baseURL?: string | undefined } | string) => typeof part === 'object' && remote(part.baseURL);
  // Module and mcp-cli agents bring their own model clients: they opt in with `provider`.
  const agent = options.agent.type !== 'module' && options.agent.type !== 'mcp-cli' && real(options.agent as { baseURL?: string });
  return agent || (options.adversary !== 'scripted' && real(options.adversary)) || (options.user !== 'scripted' && real(options.user));
}

/**
 * One model proxy per Vitest run, shared by every worker and project: the limits are run-wide.
 * On unless `provider: false`, whoever serves the model (a remote provider, the embedded scripted
 * model, the local model): it is what records the system prompt and tools each request offered.
 */
function modelProxyFor(options: ResolvedVeraOptions, vitest: Vitest): Promise<StartedModelProxy> | undefined {
  if (options.provider === false) return undefined;
  let proxy = proxies.get(vitest);
  if (!proxy) {
    const p = options.provider ?? {};
    proxy = startModelProxy({
      ...(p.maxConcurrent !== undefined ? { maxConcurrent: p.maxConcurrent } : {}),
      ...(p.rpm !== undefined ? { rpm: p.rpm } : {}),
      ...(p.tpm !== undefined ? { tpm: p.tpm } : {}),
      ...(p.maxRetries !== undefined ? { maxRetries: p.maxRetries } : {}),
      ...(p.retryBaseMs !== undefined ? { baseMs: p.retryBaseMs } : {}),
      ...(p.maxRetryWaitMs !== undefined ? { maxMs: p.maxRetryWaitMs } : {}),
    });
    proxies.set(vitest, proxy);
    vitest.onClose(async () => (await proxy!).stop());
  }
  return proxy;
}

/**
 * Annotations cost a round trip to the main process per field; they are only worth it when a
 * reporter shows them: JUnit (as properties), blob (for merge-reports), HTML, or the UI.
 */
function readsAnnotations(vitest: Vitest): boolean {
  if (vitest.config.ui) return true;
  return vitest.config.reporters.some((r) => {
    const name = typeof r === 'string' ? r : Array.isArray(r) ? r[0] : undefined;
    return typeof name === 'string' && /junit|blob|html|vitest-ui/i.test(name);
  });
}

/**
 * The Vitest plugin: `plugins: [vera({ agent: … })]`. It adds the case files to the project,
 * turns each into a test module, provides the options to the workers, defines the tags, and adds
 * the ASR reporter.
 */
export function vera(userOptions: VeraOptions): Plugin {
  return veraPlugin(userOptions);
}

/** The plugin; `only` (the library project's): the cases of its files that get tests. */
function veraPlugin(userOptions: VeraOptions, only?: ReadonlySet<string>): Plugin {
  const options = parseOptions(userOptions);
  const runtime = runtimeModulePath();
  // The agent and environment modules, resolved against the project root once it is known.
  let userModules: string[] = [];
  let root = process.cwd();
  // The run and this project's name: whether test names carry the project is known once all are configured.
  let run: Vitest | undefined;
  let projectName = '';
  // Init steps and witnesses, checked when a case file loads (shared by the transform and the planner).
  const validation = new CaseValidation(() => loadEnvironments(options.environments, root), { shared: options.environments.length === 0 });
  // YAML files and case modules, loaded once for the transform, the risk tags and the planner.
  const sources = new CaseSources();
  return {
    name: 'vera',
    enforce: 'pre',
    // Read by `vera check` / `report` / `replay` (cli/project-config.ts) to find the project's cases and records.
    api: { veraOptions: options },
    config() {
      // The built runtime is plain ESM: workers import it natively, as any installed dependency,
      // instead of sending each of its modules through Vite's transform pipeline. (Set here,
      // before Vitest builds its resolver; from the repository's TS sources it cannot be.)
      if (!runtime.endsWith('.js')) return undefined;
      return { test: { server: { deps: { external: [new RegExp(`^${escapeRegExp(dirname(dirname(runtime)))}/`)] } } } };
    },
    async configureVitest({ vitest, project, injectTestProjects }) {
      const config = project.config;
      if (options.library) await addLibraryProject({ userOptions, project, vitest, injectTestProjects });
      userModules = userModulePaths(options, config.root, resolve);
      sources.attach(project.vite);
      run = vitest;
      projectName = project.name;
      if (!agentsOfRun.has(vitest)) agentsOfRun.set(vitest, new Map());
      agentsOfRun.get(vitest)!.set(project.name, JSON.stringify(options.agent));
      vitest.onClose(() => sources.close());
      root = config.root;
      // Nothing an interrupted run made on the host outlives it (sandbox/backends/scratch-dirs.ts),
      // and no half-written record of a killed run is left beside the complete ones.
      installMainProcessCleanup(workspaceRoot());
      if (options.recordDir !== false) sweepStaleRecordTemps(resolve(config.root, options.recordDir));
      // A project that runs only cases (its own include was empty) is tuned for them: every case
      // file in one non-isolated worker, so one scheduler sees all runs and keeps `concurrency`
      // of them in flight across files. Projects that also hold unit tests are left as they are.
      const dedicated = config.include.length === 0 && options.tune !== false;
      config.include = [...config.include, ...options.include];
      if (dedicated && options.schedule === 'prefetch') {
        config.isolate = false;
        config.maxWorkers = 1;
        // A worker thread starts faster than a worker process. Not with containers or agent
        // programs: their clean-up hooks run when a process exits, and a thread is just stopped.
        const agentType = options.agent.type;
        if (options.sandbox === 'in-process' && (agentType === 'reference' || agentType === 'module')) config.pool = 'threads';
      }
      config.includeTaskLocation = true;
      // `--merge-reports` runs nothing: the results come from the blobs, so there are no case files
      // to parse (their witnesses run sandboxes), no model server or proxy to start, no runs to
      // plan — only the reporters, which read what the shards recorded.
      const merging = Boolean(vitest.config.mergeReports);
      // Independent start-up work at once: the case files' risk tags, the embedded model server, the proxy.
      const embedded: EmbeddedModels = { scripted: [...options.scriptedModels], localSlots: 0 };
      const [risks, withServers, proxy] = merging
        ? [[], options, undefined]
        : await Promise.all([riskCategories(project), resolveEmbeddedModel(options, vitest, embedded), modelProxyFor(options, vitest)]);
      // A local model serves a request or two at a time: more runs at once than that only queue
      // behind each other and spend their time budgets waiting (unless `concurrency` says otherwise).
      const resolved = embedded.localSlots && userOptions.concurrency === undefined ? { ...withServers, concurrency: embedded.localSlots } : withServers;
      config.maxConcurrency = resolved.concurrency;
      const scriptedModels = embedded.scripted;
      const riskTags = risks.map((r) => `risk:${r}`);
      const defined = new Set(config.tags.map((t) => t.name));
      for (const name of [...threatModels.map((m) => `threat:${m}`), ...riskTags]) {
        if (!defined.has(name))
          config.tags.push({ name, description: name.startsWith('threat:') ? `Vera threat model ${name.slice(7)}` : `Vera risk category ${name.slice(5)}` });
      }
      const runtimeConfig: VeraRuntimeConfig = {
        options: resolved,
        root: config.root,
        runId: newRunId(),
        riskTags,
        annotate: options.annotate ?? readsAnnotations(vitest),
        ...(proxy ? { modelProxyUrl: proxy.url } : {}),
        ...(scriptedModels.length ? { scriptedModels } : {}),
        counterfactual: options.counterfactual === 'auto' ? !talksToRemoteProvider(options) : options.counterfactual,
      };
      project.provide(PROVIDE_KEY, runtimeConfig);
      if (options.schedule === 'prefetch' && !merging)
        vitest.config.reporters.push(
          new RunPlanner(project, () => runtimeConfig, {
            validation,
            sources,
            project: () => projectInTestNames(run, projectName),
            ...(only ? { only } : {}),
          }) as never,
        );
      if (options.report && !reporterAdded.has(vitest)) {
        reporterAdded.add(vitest);
        vitest.config.reporters.push(
          new AsrReporter({
            progress: options.progress,
            root: config.root,
            ...(options.summary ? { summary: options.summary } : {}),
            ...(options.provider && options.provider.prices ? { prices: options.provider.prices } : {}),
          }) as never,
        );
      }
    },
    async transform(code, id) {
      const [file, query = ''] = id.split('?') as [string, string?];
      // A case module's own code (evaluated for its values) is left to Vite's TypeScript transform.
      if (!CASE_FILE.test(file) || new URLSearchParams(query).has(CASE_SOURCE_QUERY)) return undefined;
      // A case whose init script or witnesses fail is a file error: none of its verdicts may count.
      const loaded = await sources.load(file, code);
      const problems = loaded.ok ? await validation.problemsOf(loaded.cases) : [];
      const inNames = projectInTestNames(run, projectName);
      return transformCaseFile(code, file, runtime, {
        schedule: options.schedule,
        userModules,
        problems,
        loaded,
        ...(only ? { only } : {}),
        ...(inNames ? { project: inNames } : {}),
      });
    },
  };
}

/**
 * The `library` option: a Vitest project of its own whose `dir` is the installed package's
 * `cases` (Vitest leaves node_modules out of every glob of the user's project, and a project's
 * globs are relative to its `dir`), with the same agent and options, running only the selected
 * cases. Vitest calls `configureVitest` only for the projects it resolved itself, so the library
 * project's plugin is configured here.
 */
async function addLibraryProject(input: {
  userOptions: VeraOptions;
  project: TestProject;
  vitest: Vitest;
  injectTestProjects: (config: TestProjectConfiguration) => Promise<TestProject[]>;
}): Promise<void> {
  const { library, ...rest } = input.userOptions;
  const selection = await selectLibraryCases(libraryPreset.parse(library));
  const plugin = veraPlugin({ ...rest, include: selection.files }, selection.cases);
  const config = input.project.config;
  const name = config.name ? `${config.name}:library` : 'library';
  const [injected] = await input.injectTestProjects({
    plugins: [plugin],
    test: { name, root: config.root, dir: selection.dir, include: [], testTimeout: config.testTimeout, hookTimeout: config.hookTimeout },
  });
  // Filtered out (`--project` names another): nothing to set up.
  if (!injected) return;
  const hook = plugin.configureVitest as (context: {
    vitest: Vitest;
    project: TestProject;
    injectTestProjects: typeof input.injectTestProjects;
  }) => Promise<void>;
  await hook({ vitest: input.vitest, project: injected, injectTestProjects: input.injectTestProjects });
  input.vitest.logger.log(`vera: project "${name}": ${selection.label}`);
}
