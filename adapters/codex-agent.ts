import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { programRoots, spawnerOf, startAgentProcess, type SpawnFn, TurnProcesses } from './agent-process.js';
import { ProgramReport } from './agent-report.js';
import { ProgramSession, perTurnProgram } from './agent-session.js';
import { CODEX_PROGRAM, locateProgram, type CliProgramOptions } from './agent-programs.js';
import { splitShellInvocation } from './native-tools.js';

export interface CodexAgentOptions extends CliProgramOptions {
  /** Model name sent to the provider, e.g. `gpt-5-codex`. */
  model: string;
  /** Responses API base URL (default OPENAI_BASE_URL, then https://api.openai.com/v1). Codex speaks only the Responses API. */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /** Path of the `codex` program (default: VERA_CODEX_BIN, `.agents/codex`, then PATH). */
  binary?: string;
  /** Retries of a failed model request or stream (Codex's own default when unset). */
  maxRetries?: number;
  /** Extra TOML appended to the generated config.toml. */
  extraConfig?: string;
}

const KEY_VAR = 'VERA_CODEX_API_KEY';

const toml = (value: string) => JSON.stringify(value);

/** The config.toml of one session: the provider, no approvals, the gateway as MCP server `vera`. */
/** The Responses endpoint a session uses: through the run's model proxy when there is one. */
function codexEndpoint(options: CodexAgentOptions, ctx: Pick<AgentStartContext, 'modelBaseURL'>): string {
  return modelEndpoint(ctx, options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
}

export function codexConfig(options: CodexAgentOptions, ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName' | 'modelBaseURL'>): string {
  const baseURL = codexEndpoint(options, ctx);
  const retries = options.maxRetries !== undefined ? `request_max_retries = ${options.maxRetries}\nstream_max_retries = ${options.maxRetries}\n` : '';
  return [
    `model = ${toml(options.model)}`,
    'model_provider = "vera"',
    // The sandbox backend confines the agent; Codex's own sandbox would need namespaces a
    // container rarely grants, and approvals would stall a non-interactive run.
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[history]',
    'persistence = "none"',
    '',
    // At start-up Codex syncs its plugin marketplaces from github.com and chatgpt.com: background
    // traffic of the program, not the agent's doing, that the egress proxy would record.
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    '',
    '[model_providers.vera]',
    'name = "vera"',
    `base_url = ${toml(baseURL)}`,
    `env_key = ${toml(KEY_VAR)}`,
    'wire_api = "responses"',
    retries.trimEnd(),
    '',
    `[mcp_servers.${ctx.gatewayName}]`,
    `url = ${toml(ctx.gatewayUrl)}`,
    // Without it Codex asks for approval of every MCP call and, non-interactively, refuses them.
    'default_tools_approval_mode = "approve"',
    '',
    options.extraConfig ?? '',
  ].join('\n');
}

/**
 * OpenAI Codex CLI under test: each turn runs `codex exec --json` (the first) or
 * `codex exec resume --json <thread>` (later turns, same session) in the workspace, with a
 * private CODEX_HOME. Its JSONL events give the reply, the usage, what it said on the way
 * (`agent_message` items), and its native actions: `command_execution` items are recorded as
 * `shell` calls, `file_change` items as `write_file` / `edit_file` / `delete_file`, each timed
 * from its `item.started` to its `item.completed`. MCP calls are recorded by the gateway itself;
 * a failed `mcp_tool_call` the gateway never saw is an attempt.
 */
export function codexAgent(options: CodexAgentOptions): AgentAdapter {
  return {
    id: `codex:${options.model}`,
    async start(ctx) {
      const program = locateProgram({ ...CODEX_PROGRAM, configured: options.binary });
      const spawn = spawnerOf(ctx, { network: [codexEndpoint(options, ctx)], readOnly: [...programRoots([program]), ...(options.readOnly ?? [])] });
      const home = await AgentHome.create(spawn, 'codex', ctx.signal, [program]);
      const report = new ProgramReport('codex', program);
      try {
        // No secret in it: the key is passed in the variable `env_key` names.
        const config = codexConfig(options, ctx);
        await home.write('config.toml', config, ctx.signal);
        report.addConfig('config.toml', config);
      } catch (error) {
        await home.remove();
        throw error;
      }
      return new CodexSession(options, ctx, spawn, program, home, report);
    },
  };
}

interface CodexItem {
  id?: string;
  type?: string;
  text?: string;
  command?: string;
  aggregated_output?: string;
  exit_code?: number | null;
  status?: string;
  changes?: Array<{ path?: string; kind?: string }>;
  message?: string;
  query?: string;
  /** `mcp_tool_call`: which server and tool, with what, and how it failed. */
  server?: string;
  tool?: string;
  arguments?: Record<string, unknown> | null;
  error?: { message?: string } | null;
}

class CodexSession extends ProgramSession {
  private threadId: string | undefined;

  constructor(
    private readonly options: CodexAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly spawn: SpawnFn,
    private readonly program: string,
    home: AgentHome,
    private readonly programReport: ProgramReport,
    /** Every program run in this session: their trees are ended on close (a daemon a shell left running, too). */
    private readonly turns = new TurnProcesses(),
  ) {
    super('codex', perTurnProgram(turns), home, programReport);
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    const signal = sendOptions.signal ?? this.ctx.signal;
    const common = ['--json', '--skip-git-repo-check'];
    const args = this.threadId ? ['exec', 'resume', ...common, this.threadId, message] : ['exec', ...common, message];
    const proc = startAgentProcess(this.spawn, 'codex', this.program, args, {
      cwd: this.ctx.workspace,
      env: {
        ...this.options.env,
        HOME: this.home.path,
        CODEX_HOME: this.home.path,
        [KEY_VAR]: process.env[this.options.apiKeyEnv ?? 'OPENAI_API_KEY'] ?? 'no-key',
        NO_COLOR: '1',
      },
    });
    this.turns.add(proc);
    const turnReport = this.programReport.beginTurn();
    proc.endInput();
    /** When each item started (its `item.started` line), to time it when it completes. */
    const started = new Map<string, number>();
    let response = '';
    let usage: AgentTurn['usage'];
    let failed: string | undefined;
    const errors: string[] = [];
    proc.onLine((line) => {
      let event: { type?: string; thread_id?: string; item?: CodexItem; usage?: Record<string, number>; error?: { message?: string }; message?: string };
      try {
        event = JSON.parse(line);
      } catch {
        return; // not an event (a stray log line)
      }
      switch (event.type) {
        case 'thread.started':
          this.threadId ??= event.thread_id;
          break;
        case 'item.started':
          if (event.item?.id) started.set(event.item.id, Date.now());
          break;
        case 'item.completed':
          if (event.item) {
            const end = Date.now();
            const at = (event.item.id !== undefined ? started.get(event.item.id) : undefined) ?? end;
            if (event.item.type === 'agent_message') {
              // Every message is kept; the last one is the turn's reply.
              response = event.item.text ?? '';
              this.ctx.recordMessage?.({ text: response, at: end });
            } else if (event.item.type === 'error' && event.item.message) errors.push(event.item.message);
            else this.recordItem(event.item, at, end - at);
          }
          break;
        case 'turn.completed':
          usage = { input: event.usage?.input_tokens ?? 0, output: event.usage?.output_tokens ?? 0 };
          break;
        case 'turn.failed':
          failed = event.error?.message ?? 'turn failed';
          break;
        case 'error':
          if (event.message) errors.push(event.message);
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
    if (failed) throw new AgentError(`codex turn failed: ${failed}`, proc.stderrTail() || errors.join('\n'));
    if (code !== 0 || killed) throw proc.failure();
    if (!usage) throw new AgentError('codex exited without completing the turn', proc.stderrTail() || errors.join('\n'));
    return { response, usage };
  }

  /**
   * Native actions from Codex's items, started at `at` and lasting `durationMs`. MCP calls
   * (`mcp_tool_call`) are the gateway's to record; one that failed is reported as meant for the
   * gateway, and the run keeps it as an attempt when the gateway never saw it.
   */
  private recordItem(item: CodexItem, at: number, durationMs: number): void {
    const timing = { at, durationMs };
    if (item.type === 'command_execution') {
      const exitCode = item.exit_code ?? null;
      // Codex runs the model's `exec_command {cmd}` as `/bin/bash -lc '<cmd>'`: the record keeps the model's command.
      const { command, invocation } = splitShellInvocation(item.command ?? '');
      this.ctx.recordNative({
        type: 'tool_call',
        tool: 'shell',
        args: { command },
        ...(invocation !== undefined ? { invocation } : {}),
        result: { exitCode, output: item.aggregated_output ?? '' },
        isError: exitCode !== 0,
        origin: 'agent',
        // With approvals off Codex declines nothing itself, but a user's extraConfig may turn them on.
        ...(item.status === 'declined' ? { attempted: { reason: 'codex declined to run the command' } } : {}),
        ...timing,
      });
    } else if (item.type === 'file_change') {
      for (const change of item.changes ?? []) {
        const tool = change.kind === 'add' ? 'write_file' : change.kind === 'delete' ? 'delete_file' : 'edit_file';
        this.ctx.recordNative({
          type: 'tool_call',
          tool,
          args: { path: change.path ?? '' },
          result: { status: item.status ?? 'completed' },
          isError: item.status === 'failed',
          origin: 'agent',
          ...timing,
        });
      }
    } else if (item.type === 'web_search') {
      this.ctx.recordNative({ type: 'tool_call', tool: 'web_search', args: { query: item.query ?? '' }, result: null, origin: 'agent', ...timing });
    } else if (item.type === 'mcp_tool_call' && item.server === this.ctx.gatewayName && item.status === 'failed' && item.tool) {
      const error = item.error?.message ?? 'the MCP call failed';
      this.ctx.recordNative({
        type: 'tool_call',
        tool: item.tool,
        agentTool: `mcp__${item.server}__${item.tool}`,
        args: item.arguments ?? {},
        result: null,
        isError: true,
        error,
        origin: 'gateway',
        attempted: { reason: error },
        ...timing,
      });
    }
  }
}
