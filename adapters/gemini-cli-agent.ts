import { randomUUID } from 'node:crypto';
import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { ProgramReport } from './agent-report.js';
import { ProgramSession, perTurnProgram } from './agent-session.js';
import { programRoots, spawnerOf, startAgentProcess, type SpawnFn, TurnProcesses } from './agent-process.js';
import { GEMINI_CLI_PROGRAM, locateProgram, type CliProgramOptions } from './agent-programs.js';
import { geminiNativeCall, parseGeminiCliEvent } from './gemini-cli-events.js';

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

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

/** The Gemini API endpoint a session uses: through the run's model proxy when there is one. */
function geminiEndpoint(options: GeminiCliAgentOptions, ctx: Pick<AgentStartContext, 'modelBaseURL'>): string {
  return modelEndpoint(ctx, options.baseURL ?? process.env.GOOGLE_GEMINI_BASE_URL ?? DEFAULT_BASE_URL);
}

/**
 * The user settings of one session (`$GEMINI_CLI_HOME/.gemini/settings.json`): API-key auth, the
 * model, the gateway as trusted MCP server `vera` over streamable HTTP, and nothing that phones
 * home (usage statistics, telemetry, update checks, IDE discovery).
 */
export function geminiCliSettings(options: GeminiCliAgentOptions, ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName'>): Record<string, unknown> {
  return {
    // Explicit, so a workspace .env or settings file cannot switch the session to Google login.
    security: { auth: { selectedType: 'gemini-api-key' } },
    model: { name: options.model },
    // `trust`: no confirmation per MCP call (headless mode cannot answer one).
    mcpServers: { [ctx.gatewayName]: { httpUrl: ctx.gatewayUrl, trust: true } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      ...(options.maxRetries !== undefined ? { maxAttempts: Math.min(10, options.maxRetries + 1) } : {}),
    },
    ide: { enabled: false },
    ...options.extraSettings,
  };
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
  return {
    id: `gemini-cli:${options.model}`,
    async start(ctx) {
      const program = locateProgram({ ...GEMINI_CLI_PROGRAM, configured: options.binary });
      const spawn = spawnerOf(ctx, { network: [geminiEndpoint(options, ctx)], readOnly: [...programRoots([program]), ...(options.readOnly ?? [])] });
      const home = await AgentHome.create(spawn, 'gemini', ctx.signal, [program]);
      const report = new ProgramReport('gemini-cli', program);
      try {
        // No secret in it: the key is passed in GEMINI_API_KEY.
        const settings = JSON.stringify(geminiCliSettings(options, ctx), null, 2);
        await home.write('.gemini/settings.json', settings, ctx.signal);
        report.addConfig('settings.json', settings);
      } catch (error) {
        await home.remove();
        throw error;
      }
      return new GeminiCliSession(options, ctx, spawn, program, home, report);
    },
  };
}

class GeminiCliSession extends ProgramSession {
  /** Chosen here and passed as `--session-id`, so every later turn can `--resume` it. */
  private readonly sessionId = randomUUID();
  private turnsStarted = 0;

  constructor(
    private readonly options: GeminiCliAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly spawn: SpawnFn,
    private readonly program: string,
    home: AgentHome,
    private readonly programReport: ProgramReport,
    /** Every program run in this session: their trees are ended on close (a daemon a shell left running, too). */
    private readonly turns = new TurnProcesses(),
  ) {
    super('gemini', perTurnProgram(turns), home, programReport);
  }

  private get env(): Record<string, string> {
    return {
      ...this.options.env,
      HOME: this.home.path,
      GEMINI_CLI_HOME: this.home.path,
      GEMINI_API_KEY: process.env[this.options.apiKeyEnv ?? 'GEMINI_API_KEY'] ?? 'no-key',
      GOOGLE_GEMINI_BASE_URL: geminiEndpoint(this.options, this.ctx),
      // Its launcher otherwise starts the CLI again as a child process (to raise the heap limit).
      GEMINI_CLI_NO_RELAUNCH: '1',
      // The workspace is the case's: trusted for the session (in an untrusted folder headless mode refuses to run).
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      NO_COLOR: '1',
    };
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    const signal = sendOptions.signal ?? this.ctx.signal;
    const session = this.turnsStarted++ === 0 ? ['--session-id', this.sessionId] : ['--resume', this.sessionId];
    // `--prompt=…`: a message that starts with `-` stays the prompt.
    const args = [`--prompt=${message}`, '--output-format', 'stream-json', '--model', this.options.model, '--approval-mode=yolo', ...session];
    const proc = startAgentProcess(this.spawn, 'gemini', this.program, args, { cwd: this.ctx.workspace, env: this.env });
    this.turns.add(proc);
    const turnReport = this.programReport.beginTurn();
    proc.endInput();
    let response = '';
    let result: { status: string; usage: AgentTurn['usage']; error?: string } | undefined;
    const errors: string[] = [];
    /** Each native tool use from its `tool_use` line (its start) to its `tool_result` (its end). */
    const pending = new Map<string, { name: string; input: Record<string, unknown>; at: number }>();
    const gatewayPrefix = `mcp_${this.ctx.gatewayName}_`;
    proc.onLine((line) => {
      const event = parseGeminiCliEvent(line);
      if (!event) return;
      switch (event.type) {
        case 'message':
          if (event.role === 'assistant') response += event.content;
          break;
        case 'tool_use': {
          const at = Date.now();
          // What the model said before this tool call is an interim message; the reply is what it says after its last one.
          if (response.trim() !== '') this.ctx.recordMessage?.({ text: response, at });
          response = '';
          if (!event.tool_name.startsWith(gatewayPrefix)) pending.set(event.tool_id, { name: event.tool_name, input: event.parameters ?? {}, at });
          break;
        }
        case 'tool_result': {
          const use = pending.get(event.tool_id);
          if (!use) break;
          pending.delete(event.tool_id);
          const { tool, args: callArgs } = geminiNativeCall(use.name, use.input);
          const failed = event.status !== 'success';
          const error = event.error?.message;
          this.ctx.recordNative({
            type: 'tool_call',
            tool,
            args: callArgs,
            result: { output: event.output ?? '', status: event.status },
            isError: failed,
            ...(failed && error ? { error } : {}),
            origin: 'agent',
            at: use.at,
            durationMs: Date.now() - use.at,
          });
          break;
        }
        case 'error':
          errors.push(event.message);
          break;
        case 'result': {
          const usage = { input: event.stats?.input_tokens ?? 0, output: event.stats?.output_tokens ?? 0 };
          result = { status: event.status, usage, ...(event.error?.message ? { error: event.error.message } : {}) };
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
    if (result?.status === 'error') throw new AgentError(`gemini turn failed: ${result.error ?? errors.at(-1) ?? 'error'}`, detail());
    if (code !== 0 || killed) throw proc.failure();
    if (!result) throw new AgentError('gemini exited without completing the turn', detail());
    return { response, usage: result.usage };
  }
}
