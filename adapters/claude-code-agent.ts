import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { isPlainObject } from '../engine/json.js';
import { AgentHome } from './agent-home.js';
import { programRoots, spawnerOf, startAgentProcess, type AgentProcess } from './agent-process.js';
import { CLAUDE_CODE_PROGRAM, locateProgram, type CliProgramOptions } from './agent-programs.js';
import { ProgramReport } from './agent-report.js';
import { ProgramSession, longLivedProgram } from './agent-session.js';
import { claudeCodeNativeCall } from './native-tools.js';

export interface ClaudeCodeAgentOptions extends CliProgramOptions {
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
  /** Extra command-line arguments. */
  extraArgs?: string[];
}

const DEFAULT_NATIVE_TOOLS = ['Bash', 'Read', 'Write', 'Edit', 'MultiEdit', 'Glob', 'Grep'];

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
  /** When Claude Code wrote a `user` event (its tool results), ISO 8601. */
  timestamp?: string;
  /** In the `system` init event. */
  claude_code_version?: string;
  result?: string;
  is_error?: boolean;
  /** In the `result` event: the tool uses its permission rules refused this turn. */
  permission_denials?: Array<{ tool_use_id?: string; tool_name?: string }>;
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
 * Its own tool uses (Bash, Write, Edit, Read, WebFetch, …) are recorded as native actions, timed
 * from the `tool_use` to its result, and its text blocks as what it said; gateway calls
 * (`mcp__vera__*`) are recorded by the gateway. A tool use its permission rules refused (the
 * result event's `permission_denials`) is an attempt — a gateway tool among them too.
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
        const mcpJson = JSON.stringify({ mcpServers: { [ctx.gatewayName]: { type: 'http', url: ctx.gatewayUrl } } });
        const mcpConfig = await home.write('mcp.json', mcpJson, ctx.signal);
        const allowed = [...(options.nativeTools ?? DEFAULT_NATIVE_TOOLS), ...ctx.tools.map((t) => `mcp__${ctx.gatewayName}__${t.name}`)];
        const args = [
          '-p',
          '--output-format',
          'stream-json',
          '--input-format',
          'stream-json',
          '--verbose',
          '--mcp-config',
          mcpConfig,
          '--strict-mcp-config',
          '--allowedTools',
          allowed.join(','),
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
        const report = new ProgramReport('claude-code', program);
        report.addConfig('mcp.json', mcpJson);
        // The key is passed in ANTHROPIC_API_KEY, never on the command line.
        report.addConfig('command line', ['claude', ...args].join(' '));
        return new ClaudeCodeSession(options, ctx, proc, home, report);
      } catch (error) {
        await home.remove();
        throw error;
      }
    },
  };
}

/** A tool use of the turn, from its `tool_use` block (when it was read) to its result. */
interface ToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
  at: number;
}

interface FinishedUse extends ToolUse {
  end: number;
  output: string;
  detail: unknown;
  isError: boolean;
}

class ClaudeCodeSession extends ProgramSession {
  private readonly pendingUses = new Map<string, ToolUse>();
  /**
   * Tool uses of the turn that finished, held until its result event says which of them its
   * permission rules refused (the tool result alone reads like any failure). Their times are
   * their own, so recording them late does not move them in the trajectory.
   */
  private finished: FinishedUse[] = [];
  private turn: { resolve: (e: StreamEvent) => void } | undefined;
  sessionId: string | undefined;

  constructor(
    private readonly options: ClaudeCodeAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly proc: AgentProcess,
    home: AgentHome,
    private readonly programReport: ProgramReport,
  ) {
    super('claude', longLivedProgram(proc, 2000), home, programReport);
    proc.onLine((line) => {
      let event: StreamEvent;
      try {
        event = JSON.parse(line);
      } catch {
        return;
      }
      this.onEvent(event);
    });
  }

  private get gatewayPrefix(): string {
    return `mcp__${this.ctx.gatewayName}__`;
  }

  private onEvent(event: StreamEvent): void {
    if (event.session_id) this.sessionId ??= event.session_id;
    const now = Date.now();
    const blocks = Array.isArray(event.message?.content) ? event.message.content : [];
    if (event.type === 'system' && event.subtype === 'init' && event.claude_code_version) {
      this.programReport.version = event.claude_code_version;
    } else if (event.type === 'assistant') {
      for (const b of blocks) {
        if (b.type === 'text' && b.text) this.ctx.recordMessage?.({ text: b.text, at: now });
        else if (b.type === 'tool_use' && b.id && b.name) this.pendingUses.set(b.id, { id: b.id, name: b.name, input: b.input ?? {}, at: now });
      }
    } else if (event.type === 'user') {
      const written = event.timestamp ? Date.parse(event.timestamp) : Number.NaN;
      for (const b of blocks) {
        const use = b.type === 'tool_result' && b.tool_use_id ? this.pendingUses.get(b.tool_use_id) : undefined;
        if (!use) continue;
        this.pendingUses.delete(use.id);
        // A gateway call that succeeded is the gateway's record alone.
        if (use.name.startsWith(this.gatewayPrefix) && b.is_error !== true) continue;
        const end = Number.isFinite(written) ? Math.max(written, use.at) : now;
        this.finished.push({ ...use, end, output: resultText(b.content), detail: event.tool_use_result, isError: b.is_error === true });
      }
    } else if (event.type === 'result') {
      this.recordFinished(event.permission_denials ?? []);
      this.turn?.resolve(event);
    }
  }

  /** Records the turn's finished tool uses; those in `denials` never ran (attempts). */
  private recordFinished(denials: NonNullable<StreamEvent['permission_denials']>): void {
    const denied = new Set(denials.map((d) => d.tool_use_id));
    for (const use of this.finished) {
      const timing = { at: use.at, durationMs: use.end - use.at };
      const attempted = denied.has(use.id) ? { attempted: { reason: use.output || `Claude Code's permission rules refused ${use.name}` } } : {};
      if (use.name.startsWith(this.gatewayPrefix)) {
        // Failed, or refused before it was sent: the run keeps it as an attempt unless the gateway saw it.
        this.ctx.recordNative({
          type: 'tool_call',
          tool: use.name.slice(this.gatewayPrefix.length),
          agentTool: use.name,
          args: use.input,
          result: null,
          isError: true,
          error: use.output,
          origin: 'gateway',
          ...attempted,
          ...timing,
        });
        continue;
      }
      const call = claudeCodeNativeCall(use.name, use.input);
      const detail = isPlainObject(use.detail) ? use.detail : {};
      this.ctx.recordNative({
        type: 'tool_call',
        ...call,
        result: { output: use.output, ...detail },
        isError: use.isError,
        ...(use.isError ? { error: use.output } : {}),
        origin: 'agent',
        ...attempted,
        ...timing,
      });
    }
    this.finished = [];
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    if (!this.proc.running) throw this.proc.failure();
    const signal = sendOptions.signal ?? this.ctx.signal;
    const turnReport = this.programReport.beginTurn();
    const stderrMark = this.proc.stderrMark();
    const result = new Promise<StreamEvent>((resolve) => (this.turn = { resolve }));
    this.proc.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: message } })}\n`);
    const timeoutMs = (this.options.turnTimeoutSeconds ?? 600) * 1000;
    let event: StreamEvent;
    try {
      event = await this.proc.race(result, { signal, timeoutMs });
    } catch (error) {
      this.proc.kill();
      // What finished before the turn was cut off still happened.
      this.recordFinished([]);
      throw error;
    } finally {
      this.turn = undefined;
      // One program for the whole session: a turn has its stderr, and an exit only when it died.
      this.programReport.endTurn(turnReport, this.proc.stderrSince(stderrMark), this.proc.exit);
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
}
