import { AgentError, type AgentAdapter, type AgentSession, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { programRoots, spawnerOf, startAgentProcess, type AgentProcess } from './agent-process.js';
import { HERMES_PROGRAM, locateProgram, type CliProgramOptions } from './agent-programs.js';

export interface HermesAgentOptions extends CliProgramOptions {
  /** Model name at the provider. */
  model: string;
  /** OpenAI-compatible endpoint (default OPENAI_BASE_URL, then https://api.openai.com/v1). */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /** Hermes' provider name in config.yaml (default `custom`: an OpenAI-compatible endpoint). */
  provider?: string;
  /** Path of the `hermes` program (default: VERA_HERMES_BIN, then PATH). */
  binary?: string;
}

const KEY_VAR = 'OPENAI_API_KEY';

/** `$HERMES_HOME/config.yaml`: the model and the gateway under `mcp_servers` (JSON is valid YAML). */
/** The model endpoint a session uses: through the run's model proxy when there is one. */
function hermesEndpoint(options: HermesAgentOptions, ctx: Pick<AgentStartContext, 'modelBaseURL'>): string {
  return modelEndpoint(ctx, options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
}

export function hermesConfig(options: HermesAgentOptions, ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName' | 'modelBaseURL'>): string {
  const config = {
    model: { default: options.model, provider: options.provider ?? 'custom', base_url: hermesEndpoint(options, ctx) },
    mcp_servers: { [ctx.gatewayName]: { url: ctx.gatewayUrl, enabled: true } },
  };
  return `# written by vera-safety for one test session\n${JSON.stringify(config, null, 2)}\n`;
}

interface AcpToolCall {
  toolCallId?: string;
  title?: string;
  kind?: string;
  status?: string;
  rawInput?: Record<string, unknown>;
  rawOutput?: unknown;
  content?: Array<{ type?: string; content?: { type?: string; text?: string }; path?: string; newText?: string }>;
  _meta?: { toolName?: string };
}

/** ACP's tool kinds → the names native actions get in the trajectory. */
function nativeCall(call: AcpToolCall): { tool: string; args: Record<string, unknown> } {
  const input = call.rawInput ?? {};
  const path = input.path ?? input.file_path ?? call.content?.find((c) => c.path)?.path;
  switch (call.kind) {
    case 'execute':
      return { tool: 'shell', args: { command: input.command ?? input.cmd ?? call.title ?? '' } };
    case 'edit':
      return { tool: input.content !== undefined ? 'write_file' : 'edit_file', args: { path, ...input } };
    case 'delete':
      return { tool: 'delete_file', args: { path, ...input } };
    case 'read':
      return { tool: 'read_file', args: { path } };
    default:
      return { tool: call._meta?.toolName ?? call.title ?? 'unknown', args: input };
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
 * Written against Hermes' documented interfaces and tested against a stand-in that speaks them
 * (test/helpers/hermes-standin.mjs): Hermes itself was not run while building this adapter.
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
        await home.write('config.yaml', hermesConfig(options, ctx), ctx.signal);
        proc = startAgentProcess(spawn, 'hermes', program, ['acp'], {
          cwd: ctx.workspace,
          env: { ...options.env, HOME: home.path, HERMES_HOME: home.path, [KEY_VAR]: process.env[options.apiKeyEnv ?? KEY_VAR] ?? 'no-key', NO_COLOR: '1' },
        });
        const session = new HermesSession(options, ctx, proc, home);
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

class HermesSession implements AgentSession {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly calls = new Map<string, AcpToolCall>();
  private sessionId: string | undefined;
  private reply = '';
  private closed: Promise<void> | undefined;

  constructor(
    private readonly options: HermesAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly proc: AgentProcess,
    private readonly home: AgentHome,
  ) {
    proc.onLine((line) => {
      let message: { id?: number | string; method?: string; params?: any; result?: unknown; error?: { message?: string; code?: number } };
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
        if (message.error) waiter?.reject(new AgentError(`hermes acp: ${message.error.message ?? 'error'} (${message.error.code ?? '?'})`, this.proc.stderrTail()));
        else waiter?.resolve(message.result);
      }
    });
  }

  private timeoutMs(): number {
    return (this.options.turnTimeoutSeconds ?? 600) * 1000;
  }

  private request(method: string, params: unknown, signal: AbortSignal): Promise<any> {
    const id = this.nextId++;
    const answer = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.proc.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return this.proc.race(answer, { signal, timeoutMs: this.timeoutMs() });
  }

  async open(): Promise<void> {
    await this.request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } }, this.ctx.signal);
    const created = (await this.request(
      'session/new',
      { cwd: this.ctx.workspace, mcpServers: [{ type: 'http', name: this.ctx.gatewayName, url: this.ctx.gatewayUrl, headers: [] }] },
      this.ctx.signal,
    )) as { sessionId?: string };
    if (!created?.sessionId) throw new AgentError('hermes acp: session/new returned no sessionId', this.proc.stderrTail());
    this.sessionId = created.sessionId;
  }

  /** Requests from the agent: permissions are granted; the client offers no fs/terminal of its own. */
  private onRequest(id: number | string, method: string, params: any): void {
    let response: object;
    if (method === 'session/request_permission') {
      const options: Array<{ optionId: string; kind?: string }> = params?.options ?? [];
      const allow = options.find((o) => o.kind === 'allow_always') ?? options.find((o) => o.kind === 'allow_once') ?? options[0];
      response = { result: allow ? { outcome: { outcome: 'selected', optionId: allow.optionId } } : { outcome: { outcome: 'cancelled' } } };
    } else {
      response = { error: { code: -32601, message: `method not supported by this client: ${method}` } };
    }
    this.proc.write(`${JSON.stringify({ jsonrpc: '2.0', id, ...response })}\n`);
  }

  private isGatewayTool(call: AcpToolCall): boolean {
    const name = call._meta?.toolName ?? call.title ?? '';
    const g = this.ctx.gatewayName;
    return [`mcp_${g}_`, `mcp__${g}__`, `${g}__`, `${g}.`].some((p) => name.startsWith(p));
  }

  private onNotification(method: string, params: any): void {
    if (method !== 'session/update' || params?.sessionId !== this.sessionId) return;
    const update = params.update ?? {};
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        if (update.content?.type === 'text') this.reply += update.content.text ?? '';
        break;
      case 'tool_call':
      case 'tool_call_update': {
        const id = update.toolCallId as string | undefined;
        if (!id) break;
        const call: AcpToolCall = { ...this.calls.get(id), ...Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined && v !== null)) };
        this.calls.set(id, call);
        if (call.status !== 'completed' && call.status !== 'failed') break;
        this.calls.delete(id);
        if (this.isGatewayTool(call)) break;
        const { tool, args } = nativeCall(call);
        const output = call.rawOutput ?? (call.content ?? []).map((c) => c.content?.text ?? c.newText ?? '').join('\n');
        this.ctx.recordNative({ type: 'tool_call', tool, args, result: { output }, isError: call.status === 'failed', origin: 'agent' });
        break;
      }
    }
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    if (this.closed) throw new AgentError('hermes session is closed');
    const signal = sendOptions.signal ?? this.ctx.signal;
    this.reply = '';
    let result: { stopReason?: string; usage?: { inputTokens?: number; outputTokens?: number } };
    try {
      result = await this.request('session/prompt', { sessionId: this.sessionId, prompt: [{ type: 'text', text: message }] }, signal);
    } catch (error) {
      this.proc.kill();
      throw error;
    }
    if (result?.stopReason === 'refusal' || result?.stopReason === 'cancelled') {
      throw new AgentError(`hermes stopped the turn: ${result.stopReason}`, this.proc.stderrTail());
    }
    return { response: this.reply, usage: { input: result?.usage?.inputTokens ?? 0, output: result?.usage?.outputTokens ?? 0 } };
  }

  diagnostics(): string {
    return this.proc.stderrTail();
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.proc.endGracefully(1000);
      await this.home.remove();
    })();
    return this.closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
