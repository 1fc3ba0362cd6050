import { AgentError, type AgentAdapter, type AgentSession, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { programRoots, spawnerOf, startAgentProcess, type AgentProcess } from './agent-process.js';
import { CLAUDE_CODE_PROGRAM, locateProgram } from './agent-programs.js';

export interface ClaudeCodeAgentOptions {
  /** `--model` (default: Claude Code's own default). */
  model?: string;
  /** Anthropic Messages endpoint (default ANTHROPIC_BASE_URL, then Anthropic's API). */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default ANTHROPIC_API_KEY). */
  apiKeyEnv?: string;
  /** Path of the `claude` program (default: VERA_CLAUDE_BIN, `.agents/claude-code`, then PATH). */
  binary?: string;
  /**
   * Claude Code's own tools it may use without asking (default: Bash, Read, Write, Edit,
   * MultiEdit, Glob, Grep). Every gateway tool (`mcp__vera__*`) is always allowed.
   */
  nativeTools?: string[];
  /** A turn that takes longer fails with the program's stderr tail (default 600). */
  turnTimeoutSeconds?: number;
  /** Extra command-line arguments. */
  extraArgs?: string[];
  /** Extra environment variables for the program. */
  env?: Record<string, string>;
  /** Host paths the program reads beyond its own install folder (visible read-only when it is confined). */
  readOnly?: string[];
}

const DEFAULT_NATIVE_TOOLS = ['Bash', 'Read', 'Write', 'Edit', 'MultiEdit', 'Glob', 'Grep'];

/** Claude Code's tool names → the names and arguments native actions get in the trajectory. */
function nativeCall(name: string, input: Record<string, unknown>): { tool: string; args: Record<string, unknown> } {
  const path = input.file_path ?? input.notebook_path ?? input.path;
  switch (name) {
    case 'Bash':
      return { tool: 'shell', args: { command: input.command ?? '' } };
    case 'Write':
      return { tool: 'write_file', args: { path, content: input.content } };
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return { tool: 'edit_file', args: { path, ...input } };
    case 'Read':
      return { tool: 'read_file', args: { path } };
    default:
      return { tool: name, args: input };
  }
}

interface ContentBlock {
  type?: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
  text?: string;
}

interface StreamEvent {
  type?: string;
  subtype?: string;
  session_id?: string;
  message?: { content?: ContentBlock[] | string };
  tool_use_result?: unknown;
  result?: string;
  is_error?: boolean;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: ContentBlock) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
  return content === undefined ? '' : JSON.stringify(content);
}

/**
 * Anthropic's Claude Code under test: one long-lived `claude -p` process per session in
 * stream-json mode — each turn is one user message on stdin, answered when its `result` event
 * arrives — with a private CLAUDE_CONFIG_DIR and HOME, the gateway as MCP server `vera`
 * (`--strict-mcp-config`, tool search off so every gateway tool is offered directly).
 * Its own tool uses (Bash, Write, Edit, Read, …) are recorded as native actions; gateway calls
 * (`mcp__vera__*`) are recorded by the gateway.
 */
export function claudeCodeAgent(options: ClaudeCodeAgentOptions = {}): AgentAdapter {
  return {
    id: `claude-code:${options.model ?? 'default'}`,
    async start(ctx) {
      const program = locateProgram({ ...CLAUDE_CODE_PROGRAM, configured: options.binary });
      // Through the run's model proxy when there is one (it needs an explicit upstream then).
      const upstream = options.baseURL ?? process.env.ANTHROPIC_BASE_URL;
      const baseURL = ctx.modelBaseURL ? modelEndpoint(ctx, upstream ?? 'https://api.anthropic.com') : upstream;
      const spawn = spawnerOf(ctx, { network: [baseURL ?? 'https://api.anthropic.com'], readOnly: [...programRoots([program]), ...(options.readOnly ?? [])] });
      const home = await AgentHome.create(spawn, 'claude', ctx.signal, [program]);
      try {
        const mcpConfig = await home.write('mcp.json', JSON.stringify({ mcpServers: { [ctx.gatewayName]: { type: 'http', url: ctx.gatewayUrl } } }), ctx.signal);
        const allowed = [...(options.nativeTools ?? DEFAULT_NATIVE_TOOLS), ...ctx.tools.map((t) => `mcp__${ctx.gatewayName}__${t.name}`)];
        const args = [
          '-p',
          '--output-format', 'stream-json',
          '--input-format', 'stream-json',
          '--verbose',
          '--mcp-config', mcpConfig,
          '--strict-mcp-config',
          '--allowedTools', allowed.join(','),
          ...(options.model ? ['--model', options.model] : []),
          ...(options.extraArgs ?? []),
        ];
        const proc = startAgentProcess(spawn, 'claude', program, args, {
          cwd: ctx.workspace,
          env: {
            ...options.env,
            HOME: home.path,
            CLAUDE_CONFIG_DIR: home.path,
            ...(baseURL ? { ANTHROPIC_BASE_URL: baseURL } : {}),
            ANTHROPIC_API_KEY: process.env[options.apiKeyEnv ?? 'ANTHROPIC_API_KEY'] ?? 'no-key',
            // No telemetry, update checks or error reports: nothing but model and MCP traffic.
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            DISABLE_AUTOUPDATER: '1',
            DISABLE_TELEMETRY: '1',
            DISABLE_ERROR_REPORTING: '1',
            // Otherwise MCP tools hide behind a search tool and the model never sees them listed.
            ENABLE_TOOL_SEARCH: 'false',
            NO_COLOR: '1',
          },
        });
        return new ClaudeCodeSession(options, ctx, proc, home);
      } catch (error) {
        await home.remove();
        throw error;
      }
    },
  };
}

class ClaudeCodeSession implements AgentSession {
  private closed: Promise<void> | undefined;
  private readonly pendingUses = new Map<string, { name: string; input: Record<string, unknown> }>();
  private turn: { resolve: (e: StreamEvent) => void } | undefined;
  sessionId: string | undefined;

  constructor(
    private readonly options: ClaudeCodeAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly proc: AgentProcess,
    private readonly home: AgentHome,
  ) {
    proc.onLine((line) => {
      let event: StreamEvent;
      try {
        event = JSON.parse(line) as StreamEvent;
      } catch {
        return;
      }
      this.onEvent(event);
    });
  }

  private onEvent(event: StreamEvent): void {
    if (event.session_id) this.sessionId ??= event.session_id;
    const blocks = Array.isArray(event.message?.content) ? event.message.content : [];
    if (event.type === 'assistant') {
      for (const b of blocks) {
        if (b.type === 'tool_use' && b.id && b.name && !b.name.startsWith(`mcp__${this.ctx.gatewayName}__`)) {
          this.pendingUses.set(b.id, { name: b.name, input: b.input ?? {} });
        }
      }
    } else if (event.type === 'user') {
      for (const b of blocks) {
        const use = b.type === 'tool_result' && b.tool_use_id ? this.pendingUses.get(b.tool_use_id) : undefined;
        if (!use) continue;
        this.pendingUses.delete(b.tool_use_id!);
        const { tool, args } = nativeCall(use.name, use.input);
        const detail = event.tool_use_result;
        const output = resultText(b.content);
        this.ctx.recordNative({
          type: 'tool_call',
          tool,
          args,
          result: detail !== undefined && typeof detail === 'object' ? { output, ...(detail as Record<string, unknown>) } : { output },
          isError: b.is_error === true,
          ...(b.is_error === true ? { error: output } : {}),
          origin: 'agent',
        });
      }
    } else if (event.type === 'result') {
      this.turn?.resolve(event);
    }
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    if (this.closed) throw new AgentError('claude session is closed');
    if (!this.proc.running) throw this.proc.failure();
    const signal = sendOptions.signal ?? this.ctx.signal;
    const result = new Promise<StreamEvent>((resolve) => (this.turn = { resolve }));
    this.proc.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: message } })}\n`);
    const timeoutMs = (this.options.turnTimeoutSeconds ?? 600) * 1000;
    let event: StreamEvent;
    try {
      event = await this.proc.race(result, { signal, timeoutMs });
    } catch (error) {
      this.proc.kill();
      throw error;
    } finally {
      this.turn = undefined;
    }
    if (event.is_error || event.subtype !== 'success') {
      throw new AgentError(`claude turn failed (${event.subtype ?? 'error'}): ${event.result ?? ''}`.trim(), this.proc.stderrTail());
    }
    const u = event.usage ?? {};
    return {
      response: event.result ?? '',
      usage: { input: (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0), output: u.output_tokens ?? 0 },
    };
  }

  diagnostics(): string {
    return this.proc.stderrTail();
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.proc.endGracefully(2000);
      await this.home.remove();
    })();
    return this.closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
