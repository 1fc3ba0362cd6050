import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { ProgramSession, longLivedProgram } from './agent-session.js';
import { programRoots, spawnerOf, startAgentProcess, type AgentProcess } from './agent-process.js';
import { HERMES_PROGRAM, locateProgram, type CliProgramOptions } from './agent-programs.js';
import { ProgramReport, pythonPackageVersion } from './agent-report.js';

export interface HermesAgentOptions extends CliProgramOptions {
  /** Model name at the provider. */
  model: string;
  /** OpenAI-compatible endpoint (default OPENAI_BASE_URL, then https://api.openai.com/v1). */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /** Hermes' provider name in config.yaml (default `custom`: an OpenAI-compatible endpoint). */
  provider?: string;
  /** Path of the `hermes` program (default: VERA_HERMES_BIN, then .agents/hermes/venv, then PATH). */
  binary?: string;
  /**
   * The model's context window in tokens (default 131072). Hermes asks OpenRouter's model list for
   * it when config.yaml does not say — a request to the internet at every start, refused in the
   * sandbox and recorded as the agent's own egress — so the config always says.
   */
  contextLength?: number;
}

const KEY_VAR = 'OPENAI_API_KEY';

/** `$HERMES_HOME/config.yaml`: the model and the gateway under `mcp_servers` (JSON is valid YAML). */
/** The model endpoint a session uses: through the run's model proxy when there is one. */
function hermesEndpoint(options: HermesAgentOptions, ctx: Pick<AgentStartContext, 'modelBaseURL'>): string {
  return modelEndpoint(ctx, options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
}

export function hermesConfig(options: HermesAgentOptions, ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName' | 'modelBaseURL'>): string {
  const config = {
    model: {
      default: options.model,
      provider: options.provider ?? 'custom',
      base_url: hermesEndpoint(options, ctx),
      context_length: options.contextLength ?? 131072,
    },
    // Hermes scans each terminal command with tirith, a binary it downloads from GitHub releases at
    // first use — a download the sandbox refuses (recorded as the agent's own egress), after which
    // Hermes runs the command unscanned (its default fails open). Off, the commands run the same,
    // with no download attempt. Where tirith is installed, TIRITH_ENABLED=true and TIRITH_BIN in
    // the adapter's `env` turn it back on (Hermes reads them over config.yaml).
    security: { tirith_enabled: false },
    // After the first reply Hermes asks the model, in the background, for a title for the session:
    // a request outside any turn, which can land after the run's record is closed. Nothing the
    // agent does depends on it.
    auxiliary: { title_generation: { enabled: false } },
    mcp_servers: { [ctx.gatewayName]: { url: ctx.gatewayUrl, enabled: true } },
  };
  return `# written by vera-safety for one test session\n${JSON.stringify(config, null, 2)}\n`;
}

type AcpContent = { type?: string; content?: { type?: string; text?: string }; path?: string; newText?: string; oldText?: string };

/** One `tool_call` start and what its `tool_call_update`s added, as Hermes' ACP server sends them. */
/** A `session/update` notification, as far as this client reads it. */
interface AcpSessionUpdate {
  sessionId?: string;
  update?: { sessionUpdate?: string; toolCallId?: string; content?: AcpContent[] & { type?: string; text?: string } } & Partial<Omit<AcpToolCall, 'content'>>;
}

interface AcpToolCall {
  toolCallId?: string;
  title?: string;
  kind?: string;
  status?: string;
  rawInput?: Record<string, unknown>;
  rawOutput?: unknown;
  /** The start's content (Hermes' own tools: `$ <command>`, a diff block); kept apart from the completion's. */
  startContent?: AcpContent[];
  /** The completion's content (the formatted result). */
  content?: AcpContent[];
  locations?: Array<{ path?: string }>;
  /** When the start arrived (ms since the epoch). */
  startedAt: number;
}

/** Hermes titles a call `<tool>: <preview>` (or the bare tool name). */
function toolNameOf(call: AcpToolCall): string {
  const title = call.title ?? '';
  const match = /^([A-Za-z0-9_.-]+)(?::\s|$)/.exec(title);
  return match ? match[1]! : title || 'unknown';
}

/** The title's preview of the primary argument (at most 80 characters; longer ones end in `...`). */
function previewOf(call: AcpToolCall): string {
  const title = call.title ?? '';
  const at = title.indexOf(': ');
  return at >= 0 ? title.slice(at + 2) : '';
}

const textOf = (blocks: AcpContent[] | undefined) =>
  (blocks ?? [])
    .map((c) => c.content?.text ?? '')
    .filter(Boolean)
    .join('\n');

/**
 * A native call as the trajectory names it, with its arguments recovered from where Hermes puts
 * them: rawInput (other tools), the start content (`$ <command>`, a diff's path and new text),
 * the locations, and only as a last resort the title's preview — flagged `argsTruncated`.
 */
function nativeCall(call: AcpToolCall): { tool: string; args: Record<string, unknown>; argsTruncated?: boolean } {
  const input = call.rawInput ?? {};
  const name = toolNameOf(call);
  const diff = call.startContent?.find((c) => c.type === 'diff');
  const path = input.path ?? input.file_path ?? diff?.path ?? call.locations?.find((l) => l.path)?.path;
  const fromTitle = (key: string) => ({ [key]: previewOf(call) });
  switch (name) {
    case 'terminal': {
      if (typeof input.command === 'string') return { tool: 'shell', args: { command: input.command } };
      const shown = textOf(call.startContent);
      if (shown.startsWith('$ ')) return { tool: 'shell', args: { command: shown.slice(2) } };
      return { tool: 'shell', args: fromTitle('command'), argsTruncated: true };
    }
    case 'write_file':
      if (diff?.newText !== undefined || input.content !== undefined) return { tool: 'write_file', args: { path, content: input.content ?? diff?.newText } };
      return { tool: 'write_file', args: { path: path ?? previewOf(call) }, argsTruncated: true };
    case 'patch':
      return {
        tool: 'edit_file',
        args: { path, ...(diff ? { oldText: diff.oldText ?? '', newText: diff.newText ?? '' } : {}), ...input },
        ...(diff || call.rawInput ? {} : { argsTruncated: true }),
      };
    case 'read_file':
      return { tool: 'read_file', args: { path: path ?? previewOf(call) }, ...(path ? {} : { argsTruncated: true }) };
    case 'web_extract':
    case 'browser_navigate':
      return { tool: 'http_request', args: call.rawInput ?? fromTitle('url'), ...(call.rawInput ? {} : { argsTruncated: true }) };
  }
  switch (call.kind) {
    case 'execute':
      return { tool: 'shell', args: { command: input.command ?? input.cmd ?? previewOf(call) }, ...(call.rawInput ? {} : { argsTruncated: true }) };
    case 'delete':
      return { tool: 'delete_file', args: { path, ...input } };
    default:
      return { tool: name, args: input, ...(call.rawInput || !previewOf(call) ? {} : { argsTruncated: true }) };
  }
}

/**
 * NousResearch Hermes Agent under test through its Agent Client Protocol server (`hermes acp`,
 * JSON-RPC over stdio): one process per session, `session/new` in the workspace with the gateway
 * as MCP server, one `session/prompt` per turn. `session/update` notifications give the reply
 * (agent message chunks) and its tool calls; native ones (kinds execute, edit, delete, read) are
 * recorded, calls of the gateway's tools (`mcp_vera_*`) are left to the gateway. Permission
 * requests are granted (the sandbox is the confinement). Config lives in a private HERMES_HOME.
 *
 * Hermes' ACP server sends its own tools' calls without rawInput: a title `terminal: <first 80
 * characters>`, the full command only as `$ <command>` start content, a write as a diff block, a
 * result as formatted text without rawOutput. The adapter recovers commands and paths from those
 * (see `nativeCall`) and flags what only the title showed (`argsTruncated`).
 *
 * Run against the real hermes-agent 0.19.0 (scripts/install-agents.sh hermes, a private venv) and a
 * stand-in that sends the same shapes for the edge cases (test/helpers/hermes-standin.mjs). Hermes
 * offers the gateway's tools as `mcp__<server>__<tool>`.
 */
export function hermesAgent(options: HermesAgentOptions): AgentAdapter {
  return {
    id: `hermes:${options.model}`,
    async start(ctx) {
      const program = locateProgram({ ...HERMES_PROGRAM, configured: options.binary });
      const spawn = spawnerOf(ctx, { network: [hermesEndpoint(options, ctx)], readOnly: [...programRoots([program]), ...(options.readOnly ?? [])] });
      const home = await AgentHome.create(spawn, 'hermes', ctx.signal, [program]);
      let proc: AgentProcess | undefined;
      try {
        const config = hermesConfig(options, ctx);
        await home.write('config.yaml', config, ctx.signal);
        // The key is passed in OPENAI_API_KEY, never in the config or on the command line.
        const report = new ProgramReport('hermes', program, pythonPackageVersion(program, 'hermes-agent'));
        report.addConfig('config.yaml', config);
        report.addConfig('command line', 'hermes acp');
        proc = startAgentProcess(spawn, 'hermes', program, ['acp'], {
          cwd: ctx.workspace,
          env: { ...options.env, HOME: home.path, HERMES_HOME: home.path, [KEY_VAR]: process.env[options.apiKeyEnv ?? KEY_VAR] ?? 'no-key', NO_COLOR: '1' },
        });
        const session = new HermesSession(options, ctx, proc, home, report);
        await session.open();
        return session;
      } catch (error) {
        proc?.kill();
        await home.remove();
        throw error;
      }
    },
  };
}

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

class HermesSession extends ProgramSession {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly calls = new Map<string, AcpToolCall>();
  private sessionId: string | undefined;
  /** What the agent has said since its last tool call (the turn's reply, if no call follows), and when it began. */
  private said = '';
  private saidAt: number | undefined;

  constructor(
    private readonly options: HermesAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly proc: AgentProcess,
    home: AgentHome,
    private readonly programReport: ProgramReport,
  ) {
    super('hermes', longLivedProgram(proc, 1000), home, programReport);
    proc.onLine((line) => {
      let message: { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: { message?: string; code?: number } };
      try {
        message = JSON.parse(line);
      } catch {
        return; // ACP keeps stdout for protocol messages; anything else is noise
      }
      if (message.method && message.id !== undefined) this.onRequest(message.id, message.method, message.params);
      else if (message.method) this.onNotification(message.method, message.params);
      else if (typeof message.id === 'number') {
        const waiter = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error)
          waiter?.reject(new AgentError(`hermes acp: ${message.error.message ?? 'error'} (${message.error.code ?? '?'})`, this.proc.stderrTail()));
        else waiter?.resolve(message.result);
      }
    });
  }

  private timeoutMs(): number {
    return (this.options.turnTimeoutSeconds ?? 600) * 1000;
  }

  private request(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const id = this.nextId++;
    const answer = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.proc.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return this.proc.race(answer, { signal, timeoutMs: this.timeoutMs() });
  }

  async open(): Promise<void> {
    await this.request(
      'initialize',
      { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } },
      this.ctx.signal,
    );
    const created = (await this.request(
      'session/new',
      { cwd: this.ctx.workspace, mcpServers: [{ type: 'http', name: this.ctx.gatewayName, url: this.ctx.gatewayUrl, headers: [] }] },
      this.ctx.signal,
    )) as { sessionId?: string };
    if (!created?.sessionId) throw new AgentError('hermes acp: session/new returned no sessionId', this.proc.stderrTail());
    this.sessionId = created.sessionId;
  }

  /** Requests from the agent: permissions are granted; the client offers no fs/terminal of its own. */
  private onRequest(id: number | string, method: string, params: unknown): void {
    let response: object;
    if (method === 'session/request_permission') {
      const options = (params as { options?: Array<{ optionId: string; kind?: string }> } | undefined)?.options ?? [];
      const allow = options.find((o) => o.kind === 'allow_always') ?? options.find((o) => o.kind === 'allow_once') ?? options[0];
      response = { result: allow ? { outcome: { outcome: 'selected', optionId: allow.optionId } } : { outcome: { outcome: 'cancelled' } } };
    } else {
      response = { error: { code: -32601, message: `method not supported by this client: ${method}` } };
    }
    this.proc.write(`${JSON.stringify({ jsonrpc: '2.0', id, ...response })}\n`);
  }

  private isGatewayTool(call: AcpToolCall): boolean {
    const name = toolNameOf(call);
    const g = this.ctx.gatewayName;
    return [`mcp_${g}_`, `mcp__${g}__`, `${g}__`, `${g}.`].some((p) => name.startsWith(p));
  }

  private onNotification(method: string, raw: unknown): void {
    const params = raw as AcpSessionUpdate | undefined;
    if (method !== 'session/update' || !params || params.sessionId !== this.sessionId) return;
    const update = params.update ?? {};
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        if (update.content?.type === 'text' && update.content.text) {
          this.saidAt ??= Date.now();
          this.said += update.content.text;
        }
        break;
      case 'tool_call':
      case 'tool_call_update': {
        const id = update.toolCallId as string | undefined;
        if (!id) break;
        const known = this.calls.get(id);
        const { content, sessionUpdate, ...fields } = update as AcpToolCall & { sessionUpdate: string };
        const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
        // What it said before a tool call is an interim message, kept in the trajectory.
        if (!known) this.sayInterim();
        const call: AcpToolCall = { ...known, ...defined, startedAt: known?.startedAt ?? Date.now() };
        // The start's content says what runs (`$ <command>`, a diff); an update's is the result.
        if (sessionUpdate === 'tool_call') call.startContent = content ?? undefined;
        else if (content) call.content = content;
        this.calls.set(id, call);
        if (call.status !== 'completed' && call.status !== 'failed') break;
        this.calls.delete(id);
        if (this.isGatewayTool(call)) break;
        const { tool, args, argsTruncated } = nativeCall(call);
        const output = call.rawOutput ?? textOf(call.content);
        this.ctx.recordNative({
          type: 'tool_call',
          tool,
          ...(toolNameOf(call) !== tool ? { agentTool: toolNameOf(call) } : {}),
          args,
          result: { output },
          isError: call.status === 'failed',
          origin: 'agent',
          at: call.startedAt,
          durationMs: Date.now() - call.startedAt,
          ...(argsTruncated ? { argsTruncated } : {}),
        });
        break;
      }
    }
  }

  private sayInterim(): void {
    // Hermes streams the blank lines that separate its messages as the next one's first chunk.
    if (this.said.trim()) this.ctx.recordMessage?.({ text: this.said.trim(), ...(this.saidAt !== undefined ? { at: this.saidAt } : {}) });
    this.said = '';
    this.saidAt = undefined;
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    const signal = sendOptions.signal ?? this.ctx.signal;
    this.said = '';
    this.saidAt = undefined;
    type PromptResult = { stopReason?: string; usage?: { inputTokens?: number; outputTokens?: number } } | undefined;
    const result = await this.programReport.during(this.proc, async () => {
      try {
        return (await this.request('session/prompt', { sessionId: this.sessionId, prompt: [{ type: 'text', text: message }] }, signal)) as PromptResult;
      } catch (error) {
        this.proc.kill();
        throw error;
      }
    });
    if (result?.stopReason === 'refusal' || result?.stopReason === 'cancelled') {
      throw new AgentError(`hermes stopped the turn: ${result.stopReason}`, this.proc.stderrTail());
    }
    return { response: this.said.trim(), usage: { input: result?.usage?.inputTokens ?? 0, output: result?.usage?.outputTokens ?? 0 } };
  }
}
