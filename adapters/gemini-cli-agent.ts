import { randomUUID } from 'node:crypto';
import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { ProgramReport } from './agent-report.js';
import { ProgramSession, perTurnProgram } from './agent-session.js';
import { programRoots, spawnerOf, startAgentProcess, type SpawnFn, TurnProcesses } from './agent-process.js';
import { GEMINI_CLI_PROGRAM, locateProgram, QWEN_CODE_PROGRAM, QWEN_NODE_PROGRAM, type CliProgramOptions, type ProgramSearch } from './agent-programs.js';
import { geminiNativeCall, geminiTurnEvents } from './gemini-cli-events.js';

export interface GeminiCliAgentOptions extends CliProgramOptions {
  /** Model name at the provider, e.g. `gemini-2.5-flash`. */
  model: string;
  /** Gemini API base URL, without `/v1beta` (default GOOGLE_GEMINI_BASE_URL, then https://generativelanguage.googleapis.com). */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default GEMINI_API_KEY). */
  apiKeyEnv?: string;
  /** Path of the `gemini` program (default: VERA_GEMINI_BIN, `.agents/gemini-cli`, then PATH). */
  binary?: string;
  /** Retries of a failed model request (Gemini CLI's own default, 9, when unset). */
  maxRetries?: number;
  /** Extra top-level settings, merged over the generated settings.json. */
  extraSettings?: Record<string, unknown>;
}

export interface QwenCodeAgentOptions extends GeminiCliAgentOptions {
  /** Model name at the OpenAI-compatible endpoint, e.g. `qwen3-coder-plus`. */
  model: string;
  /** Chat Completions base URL, with `/v1` (default OPENAI_BASE_URL, then https://api.openai.com/v1). */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /** Path of Qwen Code's `cli.js` (default: VERA_QWEN_BIN, `.agents/qwen-code`, then `qwen` on PATH). */
  binary?: string;
  /** Retries of a failed model request (Qwen Code's own default when unset). */
  maxRetries?: number;
  /** Node >= 22 that runs it (default: VERA_QWEN_NODE, then `.agents/node24`). */
  node?: string;
}

/**
 * What differs between Gemini CLI and a fork that keeps its headless mode, settings.json, MCP
 * settings and session flags (Qwen Code): the program (and the Node it needs), where its settings
 * live, the model wire and its variables, how it names the gateway's tools, and its own settings
 * and switches that keep it from making any request but the turn's. (Where its events differ,
 * `geminiTurnEvents` reads both.)
 */
export interface GeminiCliFlavor {
  /** Adapter id prefix, the program's name in the record: `gemini-cli`, `qwen-code`. */
  name: string;
  /** Process label, private home's name, error prefix: `gemini`, `qwen`. */
  label: string;
  program: Omit<ProgramSearch, 'configured'>;
  /** The Node that runs the program (a script), when the one on PATH may be too old. */
  node?: Omit<ProgramSearch, 'configured'>;
  /** Node's own options before the script. */
  nodeArgs?: string[];
  /** Its settings folder in the private home (`settings.json` in it). */
  settingsDir: string;
  /** The model endpoint before the run's proxy: the option, a host variable, the provider's. */
  baseURL(options: GeminiCliAgentOptions): string;
  /** The host variable the API key is read from unless `apiKeyEnv` says otherwise. */
  apiKeyEnv: string;
  /** The program's variables for the key and the endpoint. */
  keyVar: string;
  baseURLVar: string;
  /** Its settings beyond the shared ones: the auth type for its endpoint, retries, its own side requests off. */
  settings(options: GeminiCliAgentOptions): Record<string, unknown>;
  /** Its environment beyond HOME, the key and the endpoint: its home, no relaunch, its switches. */
  env(home: string): Record<string, string>;
  /** The gateway's tools' name prefix in its events: `mcp_vera_`, `mcp__vera__`. */
  mcpToolPrefix(gatewayName: string): string;
}

const plainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Merges settings objects, nested objects key by key (arrays and values replaced). */
function mergeSettings(...layers: Array<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      const prior = out[key];
      out[key] = plainObject(prior) && plainObject(value) ? mergeSettings(prior, value) : value;
    }
  }
  return out;
}

export const GEMINI_CLI_FLAVOR: GeminiCliFlavor = {
  name: 'gemini-cli',
  label: 'gemini',
  program: GEMINI_CLI_PROGRAM,
  settingsDir: '.gemini',
  baseURL: (options) => options.baseURL ?? process.env.GOOGLE_GEMINI_BASE_URL ?? 'https://generativelanguage.googleapis.com',
  apiKeyEnv: 'GEMINI_API_KEY',
  keyVar: 'GEMINI_API_KEY',
  baseURLVar: 'GOOGLE_GEMINI_BASE_URL',
  settings: (options) => ({
    // Explicit, so a workspace .env or settings file cannot switch the session to Google login.
    security: { auth: { selectedType: 'gemini-api-key' } },
    general: {
      enableAutoUpdateNotification: false,
      ...(options.maxRetries !== undefined ? { maxAttempts: Math.min(10, options.maxRetries + 1) } : {}),
    },
  }),
  env: (home) => ({
    GEMINI_CLI_HOME: home,
    // Its launcher otherwise starts the CLI again as a child process (to raise the heap limit).
    GEMINI_CLI_NO_RELAUNCH: '1',
    // The workspace is the case's: trusted for the session (in an untrusted folder headless mode refuses to run).
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  }),
  mcpToolPrefix: (gateway) => `mcp_${gateway}_`,
};

/**
 * Qwen Code: Gemini CLI's settings under `.qwen`, OpenAI-compatible auth (Chat Completions at
 * OPENAI_BASE_URL with OPENAI_API_KEY), and off what it adds that would make a request of its own:
 * usage statistics (Alibaba Cloud RUM), the managed memory's extraction and consolidation (a model
 * request after each turn), session titles, the sleep inhibitor; no deferred tools (MCP tools behind
 * `tool_search`).
 */
export const QWEN_CODE_FLAVOR: GeminiCliFlavor = {
  name: 'qwen-code',
  label: 'qwen',
  program: QWEN_CODE_PROGRAM,
  node: QWEN_NODE_PROGRAM,
  // `--expose-gc`: as its `qwen` launcher runs it (the launcher only starts this node again with the
  // flag, or a self-installed update). `--liftoff-only`: V8 compiles the tree-sitter grammar it parses
  // shell commands with in its baseline tier only; otherwise Node's exit waits for the optimising
  // compile still running in the background (seconds on a busy machine, every turn that ran a command).
  nodeArgs: ['--expose-gc', '--liftoff-only'],
  settingsDir: '.qwen',
  baseURL: (options) => options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
  apiKeyEnv: 'OPENAI_API_KEY',
  keyVar: 'OPENAI_API_KEY',
  baseURLVar: 'OPENAI_BASE_URL',
  settings: (options) => ({
    security: { auth: { selectedType: 'openai' } },
    // Every tool offered to the model as it is, the gateway's among them (not behind `tool_search`).
    // Its bundled ripgrep is not executable as npm installs it: the built-in search, without the warning.
    tools: { toolSearch: { enabled: false }, useRipgrep: false },
    // Background model requests after a turn: memory extraction, its consolidation, skill review.
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
    // Model requests of their own (its defaults, pinned): no next-speaker check, no follow-up suggestions.
    model: { skipNextSpeakerCheck: true, ...(options.maxRetries !== undefined ? { generationConfig: { maxRetries: options.maxRetries } } : {}) },
    ui: { enableFollowupSuggestions: false },
    // No `systemd-inhibit` started beside each model request and tool call (it reaches for the host's D-Bus).
    general: { preventSystemSleep: false },
  }),
  env: (home) => ({
    QWEN_HOME: `${home}/.qwen`,
    // It would start itself again as a child process (for a memory limit or a sandbox).
    QWEN_CODE_NO_RELAUNCH: 'true',
    // Over the settings file: a workspace's settings cannot turn them on again.
    QWEN_USAGE_STATISTICS_ENABLED: 'false',
    QWEN_DISABLE_AUTO_TITLE: '1',
    // The notice that yolo runs unsandboxed: the run's sandbox confines it.
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
  }),
  mcpToolPrefix: (gateway) => `mcp__${gateway}__`,
};

/** The model endpoint a session uses: through the run's model proxy when there is one. */
function endpointOf(flavor: GeminiCliFlavor, options: GeminiCliAgentOptions, ctx: Pick<AgentStartContext, 'modelBaseURL'>): string {
  return modelEndpoint(ctx, flavor.baseURL(options));
}

function settingsOf(
  flavor: GeminiCliFlavor,
  options: GeminiCliAgentOptions,
  ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName'>,
): Record<string, unknown> {
  const shared = {
    model: { name: options.model },
    // `trust`: no confirmation per MCP call (headless mode cannot answer one).
    mcpServers: { [ctx.gatewayName]: { httpUrl: ctx.gatewayUrl, trust: true } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false },
    ide: { enabled: false },
  };
  return { ...mergeSettings(shared, flavor.settings(options)), ...options.extraSettings };
}

/**
 * The user settings of one session (`$GEMINI_CLI_HOME/.gemini/settings.json`): API-key auth, the
 * model, the gateway as trusted MCP server `vera` over streamable HTTP, and nothing that phones
 * home (usage statistics, telemetry, update checks, IDE discovery).
 */
export function geminiCliSettings(options: GeminiCliAgentOptions, ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName'>): Record<string, unknown> {
  return settingsOf(GEMINI_CLI_FLAVOR, options, ctx);
}

/**
 * Google's Gemini CLI under test: each turn runs `gemini --prompt=… --output-format stream-json`
 * in the workspace (the first with `--session-id S`, later ones `--resume S`: one session), with
 * `--approval-mode=yolo` (headless mode offers no tool that would need a confirmation otherwise;
 * the sandbox backend confines) and a private GEMINI_CLI_HOME and HOME. Its JSONL events give the
 * reply (the text after the last tool call, as its `json` format reports it), the usage and its
 * native actions: `run_shell_command` is recorded as `shell`, `write_file` / `replace` /
 * `read_file` as `write_file` / `edit_file` / `read_file`, others by name. MCP calls
 * (`mcp_vera_*`) are recorded by the gateway itself.
 */
export function geminiCliAgent(options: GeminiCliAgentOptions): AgentAdapter {
  return geminiCliFamilyAgent(GEMINI_CLI_FLAVOR, options);
}

/**
 * Qwen Code under test: Gemini CLI's fork, driven the same way (`--output-format stream-json
 * --approval-mode=yolo`, `--prompt=…`, `--session-id S` then `--resume S`, one program per turn)
 * on Node >= 22, against an OpenAI-compatible endpoint, with `.qwen/settings.json` in a
 * private HOME and Qwen Code's own switches. Its events are Claude Code's SDK messages; `edit` is
 * recorded as `edit_file`, the gateway's tools (`mcp__vera__*`) by the gateway.
 */
export function qwenCodeAgent(options: QwenCodeAgentOptions): AgentAdapter {
  return geminiCliFamilyAgent(QWEN_CODE_FLAVOR, options);
}

function geminiCliFamilyAgent(flavor: GeminiCliFlavor, options: GeminiCliAgentOptions & { node?: string }): AgentAdapter {
  return {
    id: `${flavor.name}:${options.model}`,
    async start(ctx) {
      const program = locateProgram({ ...flavor.program, configured: options.binary });
      const node = flavor.node ? locateProgram({ ...flavor.node, configured: options.node }) : undefined;
      const programs = node ? [node, program] : [program];
      const spawn = spawnerOf(ctx, { network: [endpointOf(flavor, options, ctx)], readOnly: [...programRoots(programs), ...(options.readOnly ?? [])] });
      const home = await AgentHome.create(spawn, flavor.label, ctx.signal, programs);
      const report = new ProgramReport(flavor.name, program);
      try {
        // No secret in it: the key is passed in the program's key variable.
        const settings = JSON.stringify(settingsOf(flavor, options, ctx), null, 2);
        await home.write(`${flavor.settingsDir}/settings.json`, settings, ctx.signal);
        report.addConfig('settings.json', settings);
      } catch (error) {
        await home.remove();
        throw error;
      }
      return new GeminiCliSession(
        flavor,
        options,
        ctx,
        spawn,
        node ? { command: node, script: [...(flavor.nodeArgs ?? []), program] } : { command: program, script: [] },
        home,
        report,
      );
    },
  };
}

class GeminiCliSession extends ProgramSession {
  /** Chosen here and passed as `--session-id`, so every later turn can `--resume` it. */
  private readonly sessionId = randomUUID();
  private turnsStarted = 0;

  constructor(
    private readonly flavor: GeminiCliFlavor,
    private readonly options: GeminiCliAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly spawn: SpawnFn,
    /** What is spawned: the program, or the Node that runs it with the script (and Node's options) first. */
    private readonly program: { command: string; script: string[] },
    home: AgentHome,
    private readonly programReport: ProgramReport,
    /** Every program run in this session: their trees are ended on close (a daemon a shell left running, too). */
    private readonly turns = new TurnProcesses(),
  ) {
    super(flavor.label, perTurnProgram(turns), home, programReport);
  }

  private get env(): Record<string, string> {
    return {
      ...this.options.env,
      HOME: this.home.path,
      [this.flavor.keyVar]: process.env[this.options.apiKeyEnv ?? this.flavor.apiKeyEnv] ?? 'no-key',
      [this.flavor.baseURLVar]: endpointOf(this.flavor, this.options, this.ctx),
      ...this.flavor.env(this.home.path),
      NO_COLOR: '1',
    };
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    const signal = sendOptions.signal ?? this.ctx.signal;
    const { label } = this.flavor;
    const session = this.turnsStarted++ === 0 ? ['--session-id', this.sessionId] : ['--resume', this.sessionId];
    // `--prompt=…`: a message that starts with `-` stays the prompt. (Qwen Code would take it on
    // stdin too, but then hands the model the message with a blank line after it.)
    const args = [
      ...this.program.script,
      `--prompt=${message}`,
      '--output-format',
      'stream-json',
      '--model',
      this.options.model,
      '--approval-mode=yolo',
      ...session,
    ];
    const proc = startAgentProcess(this.spawn, label, this.program.command, args, { cwd: this.ctx.workspace, env: this.env });
    this.turns.add(proc);
    const turnReport = this.programReport.beginTurn();
    proc.endInput();
    let response = '';
    let result: { ok: boolean; usage: AgentTurn['usage']; error?: string } | undefined;
    const errors: string[] = [];
    /** Each native tool use from its `tool_use` (its start) to its `tool_result` (its end). */
    const pending = new Map<string, { name: string; input: Record<string, unknown>; at: number }>();
    const gatewayPrefix = this.flavor.mcpToolPrefix(this.ctx.gatewayName);
    proc.onLine((line) => {
      for (const event of geminiTurnEvents(line)) {
        switch (event.type) {
          case 'message':
            response += event.text;
            break;
          case 'tool_use': {
            const at = Date.now();
            // What the model said before this tool call is an interim message; the reply is what it says after its last one.
            if (response.trim() !== '') this.ctx.recordMessage?.({ text: response, at });
            response = '';
            if (!event.name.startsWith(gatewayPrefix)) pending.set(event.id, { name: event.name, input: event.input, at });
            break;
          }
          case 'tool_result': {
            const use = pending.get(event.id);
            if (!use) break;
            pending.delete(event.id);
            const { tool, args: callArgs } = geminiNativeCall(use.name, use.input);
            this.ctx.recordNative({
              type: 'tool_call',
              tool,
              args: callArgs,
              result: { output: event.output, status: event.status },
              isError: !event.ok,
              ...(event.error ? { error: event.error } : {}),
              origin: 'agent',
              at: use.at,
              durationMs: Date.now() - use.at,
            });
            break;
          }
          case 'error':
            errors.push(event.message);
            break;
          // The last one is the turn's (Qwen Code prints one for a failed subagent too).
          case 'result':
            result = { ok: event.ok, usage: event.usage, ...(event.error ? { error: event.error } : {}) };
            break;
        }
      }
    });
    const timeoutMs = (this.options.turnTimeoutSeconds ?? 600) * 1000;
    // The turn's entry is filled however it ends: a killed or hung turn's stderr matters most.
    const { code, signal: killed } = await proc
      .race(proc.exited, { signal, timeoutMs, exitIsFailure: false })
      .finally(() => this.programReport.endTurn(turnReport, proc.stderrTail(), proc.exit));
    // Whatever the program left running after a crash goes with it.
    if (killed || code !== 0) proc.kill();
    const detail = () => proc.stderrTail() || errors.join('\n');
    if (result && !result.ok) throw new AgentError(`${label} turn failed: ${result.error ?? errors.at(-1) ?? 'error'}`, detail());
    if (code !== 0 || killed) throw proc.failure();
    if (!result) throw new AgentError(`${label} exited without completing the turn`, detail());
    return { response, usage: result.usage };
  }
}
