import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { ProgramReport } from './agent-report.js';
import { ProgramSession, perTurnProgram } from './agent-session.js';
import { programRoots, spawnerOf, startAgentProcess, type SpawnFn, TurnProcesses } from './agent-process.js';
import { KILO_PROGRAM, locateProgram, OPENCODE_PROGRAM, type CliProgramOptions, type ProgramSearch } from './agent-programs.js';
import { openCodeErrorMessage, openCodeNativeCall, openCodeToolResult, parseOpenCodeEvent, type OpenCodeToolPart } from './opencode-events.js';

export interface OpenCodeAgentOptions extends CliProgramOptions {
  /** Model id at the provider, e.g. `gpt-4o-mini`. */
  model: string;
  /** The OpenAI-compatible endpoint, with its `/v1` (default OPENAI_BASE_URL, then https://api.openai.com/v1). */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /** Path of the program (default: VERA_OPENCODE_BIN or VERA_KILO_BIN, `.agents/<name>`, then PATH). */
  binary?: string;
  /** Extra top-level keys of the config file (opencode.json, kilo.json), merged over the generated config. */
  extraConfig?: Record<string, unknown>;
}

/**
 * What differs between OpenCode and a fork that keeps its CLI, config schema and JSON events
 * (Kilo CLI): the program, where its config lives, its plugin package and the switches that keep
 * it from reaching out on its own.
 */
export interface OpenCodeFlavor {
  /** Adapter id prefix, process label, private home's name: `opencode`, `kilo`. */
  name: string;
  program: Omit<ProgramSearch, 'configured'>;
  /** Config folder under XDG_CONFIG_HOME and the file in it. */
  configDir: string;
  configFile: string;
  /** The plugin package it installs into every config folder it loads, unless a lock file names it. */
  pluginPackage: string;
  /** Environment that turns off model catalogues, updates, sharing, telemetry and downloads. */
  quiet: Record<string, string>;
}

/** No models.dev catalogue, update check, share links or LSP downloads: nothing but model and MCP traffic. */
const OPENCODE_QUIET = {
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  // No plugins but the built-in ones: none is configured, and one a workspace config names
  // would be installed from npm at start. The workspace's AGENTS.md and opencode.json are
  // still read, as OpenCode reads a user's repository (OPENCODE_DISABLE_PROJECT_CONFIG
  // would drop AGENTS.md too).
  OPENCODE_PURE: '1',
};

export const OPENCODE_FLAVOR: OpenCodeFlavor = {
  name: 'opencode',
  program: OPENCODE_PROGRAM,
  configDir: 'opencode',
  configFile: 'opencode.json',
  pluginPackage: '@opencode-ai/plugin',
  quiet: OPENCODE_QUIET,
};

/**
 * Kilo CLI: OpenCode's switches under its own prefix, and what Kilo adds that would reach its
 * cloud — session ingest, telemetry, the Claude Code import (it reads ~/.claude), external skills.
 */
export const KILO_FLAVOR: OpenCodeFlavor = {
  name: 'kilo',
  program: KILO_PROGRAM,
  configDir: 'kilo',
  configFile: 'kilo.json',
  pluginPackage: '@kilocode/plugin',
  quiet: {
    ...Object.fromEntries(Object.entries(OPENCODE_QUIET).map(([k, v]) => [k.replace(/^OPENCODE_/, 'KILO_'), v])),
    KILO_DISABLE_SESSION_INGEST: '1',
    KILO_TELEMETRY_LEVEL: 'off',
    KILO_DISABLE_CLAUDE_CODE: '1',
    KILO_DISABLE_EXTERNAL_SKILLS: '1',
    KILO_DISABLE_DEFAULT_PLUGINS: '1',
  },
};

/** The provider id in the generated config (`vera/<model>`). */
const PROVIDER = 'vera';
/** The variable the config reads the API key from (`{env:…}`), so the key is never written to a file. */
const KEY_VAR = 'VERA_OPENCODE_API_KEY';

/** The model endpoint a session uses: through the run's model proxy when there is one. */
function openCodeEndpoint(options: OpenCodeAgentOptions, ctx: Pick<AgentStartContext, 'modelBaseURL'>): string {
  return modelEndpoint(ctx, options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
}

/**
 * `opencode.json` of one session: ONE OpenAI-compatible provider at the model endpoint (the only
 * one enabled), the gateway as a remote MCP server without OAuth discovery, every permission
 * allowed (a headless run auto-rejects whatever would ask; the sandbox backend confines), and
 * nothing that reaches out on its own: no autoupdate, no sharing, no workspace snapshots, no LSP
 * servers or formatters (OpenCode downloads those on demand).
 */
export function openCodeConfig(options: OpenCodeAgentOptions, ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName' | 'modelBaseURL'>) {
  const model = `${PROVIDER}/${options.model}`;
  return {
    provider: {
      [PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: PROVIDER,
        options: { baseURL: openCodeEndpoint(options, ctx), apiKey: `{env:${KEY_VAR}}` },
        models: { [options.model]: { name: options.model, tool_call: true, limit: { context: 128000, output: 8192 } } },
      },
    },
    enabled_providers: [PROVIDER],
    model,
    // Title and summary requests go to the same model, never to some provider's default small model.
    small_model: model,
    autoupdate: false,
    share: 'disabled',
    snapshot: false,
    lsp: false,
    formatter: false,
    permission: 'allow',
    mcp: { [ctx.gatewayName]: { type: 'remote', url: ctx.gatewayUrl, enabled: true, oauth: false } },
    ...options.extraConfig,
  };
}

/**
 * OpenCode installs its plugin package from the npm registry into every config directory it
 * loads (in the background, at each start) unless the directory already has a `node_modules` and
 * a lock file that names the package. With this stub it skips that: a run makes no request at
 * start but to the model and the gateway. (Without it OpenCode asks registry.npmjs.org for the
 * package and its dependencies; confined, that fails after the turn has begun.)
 */
const pluginLockStub = (flavor: OpenCodeFlavor) =>
  JSON.stringify({ name: `${flavor.name}-config`, lockfileVersion: 3, packages: { '': { dependencies: { [flavor.pluginPackage]: '*' } } } });

/**
 * OpenCode under test: each turn runs `opencode run --format json` in the workspace (later turns
 * with `--session <id>`, the id from the first turn's events), the message on stdin — as an
 * argument OpenCode would wrap it in quotes. A private HOME with XDG config/data/cache/state
 * homes holds opencode.json and OpenCode's session database. Its JSON events give the reply, the
 * usage and its own tool calls as they finish: bash → `shell`, write → `write_file`, edit →
 * `edit_file`, read → `read_file` (others by name). Gateway tools (`<gateway>_*`) are recorded
 * by the gateway.
 */
export function openCodeAgent(options: OpenCodeAgentOptions): AgentAdapter {
  return openCodeFamilyAgent(OPENCODE_FLAVOR, options);
}

/**
 * Kilo CLI under test: OpenCode's fork, driven the same way (`kilo run --format json`, the same
 * events and config schema), with kilo.json and Kilo's own switches.
 */
export function kiloAgent(options: OpenCodeAgentOptions): AgentAdapter {
  return openCodeFamilyAgent(KILO_FLAVOR, options);
}

function openCodeFamilyAgent(flavor: OpenCodeFlavor, options: OpenCodeAgentOptions): AgentAdapter {
  return {
    id: `${flavor.name}:${options.model}`,
    async start(ctx) {
      const program = locateProgram({ ...flavor.program, configured: options.binary });
      const spawn = spawnerOf(ctx, { network: [openCodeEndpoint(options, ctx)], readOnly: [...programRoots([program]), ...(options.readOnly ?? [])] });
      const home = await AgentHome.create(spawn, flavor.name, ctx.signal, [program]);
      const report = new ProgramReport(flavor.name, program);
      try {
        // No secret in it: the key is read from the variable `{env:…}` names.
        const config = JSON.stringify(openCodeConfig(options, ctx), null, 2);
        await home.write(`config/${flavor.configDir}/${flavor.configFile}`, config, ctx.signal);
        report.addConfig(flavor.configFile, config);
        await home.write(`config/${flavor.configDir}/package-lock.json`, pluginLockStub(flavor), ctx.signal);
        await home.write(`config/${flavor.configDir}/node_modules/.keep`, '', ctx.signal);
      } catch (error) {
        await home.remove();
        throw error;
      }
      return new OpenCodeSession(flavor, options, ctx, spawn, program, home, report);
    },
  };
}

class OpenCodeSession extends ProgramSession {
  private sessionId: string | undefined;

  constructor(
    private readonly flavor: OpenCodeFlavor,
    private readonly options: OpenCodeAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly spawn: SpawnFn,
    private readonly program: string,
    home: AgentHome,
    private readonly programReport: ProgramReport,
    /** Every program run in this session: their trees are ended on close (a daemon a shell left running, too). */
    private readonly turns = new TurnProcesses(),
  ) {
    super(flavor.name, perTurnProgram(turns), home, programReport);
  }

  private get env(): Record<string, string> {
    const home = this.home.path;
    return {
      ...this.options.env,
      HOME: home,
      XDG_CONFIG_HOME: `${home}/config`,
      XDG_DATA_HOME: `${home}/data`,
      XDG_CACHE_HOME: `${home}/cache`,
      XDG_STATE_HOME: `${home}/state`,
      [KEY_VAR]: process.env[this.options.apiKeyEnv ?? 'OPENAI_API_KEY'] ?? 'no-key',
      ...this.flavor.quiet,
      NO_COLOR: '1',
    };
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    const signal = sendOptions.signal ?? this.ctx.signal;
    // `--title ''`: the session is titled with the prompt itself, without a title request to the model.
    const args = ['run', '--format', 'json', ...(this.sessionId ? ['--session', this.sessionId] : ['--title', ''])];
    const proc = startAgentProcess(this.spawn, this.flavor.name, this.program, args, { cwd: this.ctx.workspace, env: this.env });
    this.turns.add(proc);
    const turnReport = this.programReport.beginTurn();
    proc.write(message);
    proc.endInput();
    let stepText: string[] = [];
    /** When the step began, and when the step's first text not yet recorded began (OpenCode's clock). */
    let stepAt: number | undefined;
    let saidAt: number | undefined;
    /** How many of the step's texts are already recorded as interim messages (said before a tool call). */
    let narrated = 0;
    let response = '';
    const usage = { input: 0, output: 0 };
    const errors: string[] = [];
    proc.onLine((line) => {
      const event = parseOpenCodeEvent(line);
      if (!event) return;
      this.sessionId ??= event.sessionID;
      switch (event.type) {
        case 'step_start':
          stepText = [];
          narrated = 0;
          stepAt = event.timestamp ?? Date.now();
          break;
        case 'text':
          if (stepText.length === narrated) saidAt = event.part.time?.start ?? Date.now();
          stepText.push(event.part.text);
          // The reply is the text of the last step that said something (earlier steps' text is narration between tool calls).
          response = stepText.join('\n').trim();
          break;
        case 'tool_use': {
          // What the step said before this tool call is an interim message (the trajectory keeps the last one as the reply when nothing follows).
          // Its time: the text's own start, but never later than the step's start for the step's first
          // text — a model step says its text before its tool calls, and OpenCode stamps a part when
          // its event loop gets to it, which under load can be after the SDK already ran the tool.
          const said = stepText.slice(narrated).join('\n').trim();
          const startedAt = narrated === 0 && stepAt !== undefined ? stepAt : Number.POSITIVE_INFINITY;
          if (said !== '') this.ctx.recordMessage?.({ text: said, at: Math.min(startedAt, saidAt ?? Date.now(), event.part.state.time?.start ?? Date.now()) });
          narrated = stepText.length;
          this.recordTool(event.part);
          break;
        }
        case 'step_finish': {
          const t = event.part.tokens;
          usage.input += (t?.input ?? 0) + (t?.cache?.read ?? 0) + (t?.cache?.write ?? 0);
          usage.output += (t?.output ?? 0) + (t?.reasoning ?? 0);
          break;
        }
        case 'error':
          errors.push(openCodeErrorMessage(event));
          break;
      }
    });
    const timeoutMs = (this.options.turnTimeoutSeconds ?? 600) * 1000;
    // The turn's entry is filled however it ends: a killed or hung turn's stderr matters most.
    const { code, signal: killed } = await proc
      .race(proc.exited, { signal, timeoutMs, exitIsFailure: false })
      .finally(() => this.programReport.endTurn(turnReport, proc.stderrTail(), proc.exit));
    // Whatever the program left running after a crash goes with it.
    if (killed || code !== 0) proc.kill();
    if (errors.length > 0) throw new AgentError(`${this.flavor.name} turn failed: ${errors.join('; ')}`, proc.stderrTail());
    if (code !== 0 || killed) throw proc.failure();
    if (!this.sessionId) throw new AgentError(`${this.flavor.name} exited without a session event`, proc.stderrTail() || proc.pendingStdout.slice(-2000));
    return { response, usage };
  }

  /** A native action from a finished tool part; MCP calls (`<gateway>_<tool>`) are already in the gateway's record. */
  private recordTool(part: OpenCodeToolPart): void {
    // OpenCode names MCP tools `<server>_<tool>`, each part with [^a-zA-Z0-9_-] replaced by `_`.
    if (part.tool.startsWith(`${this.ctx.gatewayName.replace(/[^a-zA-Z0-9_-]/g, '_')}_`)) return;
    const { tool, args } = openCodeNativeCall(part.tool, part.state.input ?? {});
    const { result, isError, error } = openCodeToolResult(part);
    // Timed by OpenCode's own clock for the part (its start is when the tool began, not when the finished part was printed).
    const { start, end } = part.state.time ?? {};
    const timing = start !== undefined ? { at: start, durationMs: Math.max(0, (end ?? Date.now()) - start) } : {};
    this.ctx.recordNative({ type: 'tool_call', tool, args, result, isError, ...(error !== undefined ? { error } : {}), origin: 'agent', ...timing });
  }
}
