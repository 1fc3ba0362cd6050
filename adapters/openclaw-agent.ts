import { randomUUID } from 'node:crypto';
import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { ProgramSession, perTurnProgram } from './agent-session.js';
import { programRoots, runHelper, spawnerOf, startAgentProcess, type SpawnFn, TurnProcesses } from './agent-process.js';
import { locateProgram, NODE24_PROGRAM, OPENCLAW_PROGRAM, type CliProgramOptions } from './agent-programs.js';
import { ProgramReport, REDACTED } from './agent-report.js';
import { openClawNativeCall } from './native-tools.js';

export interface OpenClawAgentOptions extends CliProgramOptions {
  /** Model id at the provider, e.g. `gpt-4o-mini`. */
  model: string;
  /** The provider's base URL (default OPENAI_BASE_URL, then https://api.openai.com/v1). */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /** OpenClaw's request adapter for that provider (default `openai-completions`). */
  api?: 'openai-completions' | 'openai-responses' | 'anthropic-messages';
  /** Path of `openclaw.mjs` (default: VERA_OPENCLAW_BIN, `.agents/openclaw`, then `openclaw` on PATH). */
  binary?: string;
  /** Node >= 24.16 that runs it (default: VERA_OPENCLAW_NODE, then `.agents/node24`). */
  node?: string;
  /** Extra top-level config keys, merged over the generated config. */
  extraConfig?: Record<string, unknown>;
}

/** The OpenClaw config of one session: one provider, no bootstrap files, no tool search, the gateway over MCP. */
/** The model endpoint a session uses: through the run's model proxy when there is one. */
function openClawEndpoint(options: OpenClawAgentOptions, ctx: Pick<AgentStartContext, 'modelBaseURL'>): string {
  return modelEndpoint(ctx, options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
}

export function openClawConfig(
  options: OpenClawAgentOptions,
  ctx: Pick<AgentStartContext, 'gatewayUrl' | 'gatewayName' | 'workspace' | 'modelBaseURL'>,
  apiKey: string,
) {
  return {
    models: {
      mode: 'replace',
      providers: {
        vera: {
          baseUrl: openClawEndpoint(options, ctx),
          apiKey,
          api: options.api ?? 'openai-completions',
          models: [{ id: options.model, name: options.model, reasoning: false, input: ['text'], contextWindow: 128000, maxTokens: 8192 }],
        },
      },
    },
    // skipBootstrap: otherwise OpenClaw writes AGENTS.md, SOUL.md, … and a .git into the workspace.
    agents: { defaults: { model: { primary: `vera/${options.model}` }, workspace: ctx.workspace, skipBootstrap: true } },
    // Every gateway tool offered directly, not behind OpenClaw's tool search.
    tools: { toolSearch: false },
    update: { checkOnStart: false },
    mcp: { servers: { [ctx.gatewayName]: { url: ctx.gatewayUrl, transport: 'streamable-http' } } },
    ...options.extraConfig,
  };
}

/**
 * Reads the session's transcript events after `afterSeq` from OpenClaw's SQLite store (with the
 * same Node that runs OpenClaw, where the sandbox lives) and prints them as JSON lines.
 */
const TRANSCRIPT_READER = `
const { DatabaseSync } = require('node:sqlite');
const [db, session, after] = process.argv.slice(1);
const conn = new DatabaseSync(db, { readOnly: true });
for (const r of conn.prepare('select seq, event_json from transcript_events where session_id = ? and seq > ? order by seq').all(session, Number(after)))
  process.stdout.write(JSON.stringify({ seq: r.seq, event: JSON.parse(r.event_json) }) + '\\n');
`;

interface TranscriptMessage {
  role?: string;
  content?: Array<{ type?: string; id?: string; name?: string; arguments?: Record<string, unknown>; text?: string }> | string;
  toolCallId?: string;
  toolName?: string;
  details?: Record<string, unknown>;
  isError?: boolean;
  /** When the message was made, ms since the epoch (an assistant message: when its request began). */
  timestamp?: number;
}

/** One transcript line: the event and when OpenClaw wrote it (ISO 8601; an assistant message: once it was complete). */
interface TranscriptEvent {
  type?: string;
  timestamp?: string;
  message?: TranscriptMessage;
}

/**
 * Why OpenClaw did not run a tool call, when it says so: exec waits for an approval nobody can
 * give in a one-shot run (`approval-pending`, `approval-unavailable`), or its security policy
 * refused the command (`exec denied: …`).
 */
function blockedReason(details: Record<string, unknown> | undefined, output: string): string | undefined {
  const status = details?.status;
  if (status === 'approval-pending' || status === 'approval-unavailable') {
    return typeof details?.reason === 'string' ? `${status}: ${details.reason}` : `${status}: OpenClaw asked for an approval and did not run it`;
  }
  return /^exec denied\b/i.test(output.trim()) ? output.trim() : undefined;
}

/** A time in the transcript as ms since the epoch, or undefined. */
function epochMs(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * OpenClaw under test: each turn runs `openclaw agent --local --session-id S --json -m …` (the
 * same session id every turn, so it resumes) on Node 24, with a private OPENCLAW_STATE_DIR,
 * OPENCLAW_CONFIG_PATH and HOME. The JSON result gives the reply and usage; OpenClaw's own
 * transcript (its SQLite session store, read when the program has exited) gives what it said
 * and the tool calls of the turn, with the times it wrote them: the native ones (exec, write,
 * edit, read, web_fetch, …) are recorded at those times, so they land between the gateway calls
 * they came between. Gateway tools (`vera__*`) are recorded by the gateway.
 */
export function openClawAgent(options: OpenClawAgentOptions): AgentAdapter {
  return {
    id: `openclaw:${options.model}`,
    async start(ctx) {
      const script = locateProgram({ ...OPENCLAW_PROGRAM, configured: options.binary });
      const node = locateProgram({ ...NODE24_PROGRAM, configured: options.node });
      const spawn = spawnerOf(ctx, { network: [openClawEndpoint(options, ctx)], readOnly: [...programRoots([node, script]), ...(options.readOnly ?? [])] });
      const home = await AgentHome.create(spawn, 'openclaw', ctx.signal, [node, script]);
      const report = new ProgramReport('openclaw', script);
      try {
        const apiKey = process.env[options.apiKeyEnv ?? 'OPENAI_API_KEY'] ?? 'no-key';
        await home.write('openclaw.json', JSON.stringify(openClawConfig(options, ctx, apiKey), null, 2), ctx.signal);
        await home.write('state/.keep', '', ctx.signal);
        // The config holds the API key: the record gets it without.
        report.addConfig('openclaw.json', JSON.stringify(openClawConfig(options, ctx, REDACTED), null, 2));
      } catch (error) {
        await home.remove();
        throw error;
      }
      return new OpenClawSession(options, ctx, spawn, node, script, home, report);
    },
  };
}

class OpenClawSession extends ProgramSession {
  private readonly sessionId = `vera-${randomUUID()}`;
  private transcriptSeq = -1;

  constructor(
    private readonly options: OpenClawAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly spawn: SpawnFn,
    private readonly node: string,
    private readonly script: string,
    home: AgentHome,
    private readonly programReport: ProgramReport,
    /** Every program run in this session: their trees are ended on close (a daemon a shell left running, too). */
    private readonly turns = new TurnProcesses(),
  ) {
    super('openclaw', perTurnProgram(turns), home, programReport);
  }

  private get env(): Record<string, string> {
    return {
      ...this.options.env,
      HOME: this.home.path,
      OPENCLAW_STATE_DIR: `${this.home.path}/state`,
      OPENCLAW_CONFIG_PATH: `${this.home.path}/openclaw.json`,
      OPENCLAW_SKIP_CHANNELS: '1',
      // Its launcher otherwise respawns itself (for a compile cache) as a child in a new session.
      OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED: '1',
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    };
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    const signal = sendOptions.signal ?? this.ctx.signal;
    const timeoutMs = (this.options.turnTimeoutSeconds ?? 600) * 1000;
    const proc = startAgentProcess(
      this.spawn,
      'openclaw',
      this.node,
      [this.script, 'agent', '--local', '--session-id', this.sessionId, '--json', '--timeout', String(Math.ceil(timeoutMs / 1000)), '-m', message],
      {
        cwd: this.ctx.workspace,
        env: this.env,
      },
    );
    this.turns.add(proc);
    const turnReport = this.programReport.beginTurn();
    proc.endInput();
    let out = '';
    proc.child.stdout?.on('data', (chunk: string) => (out += chunk));
    const { code, signal: killed } = await proc
      .race(proc.exited, { signal, timeoutMs, exitIsFailure: false })
      .finally(() => this.programReport.endTurn(turnReport, proc.stderrTail(), proc.exit));
    // Whatever the program left running after a crash goes with it.
    if (killed || code !== 0) proc.kill();
    if (killed) throw proc.failure();
    let result: {
      payloads?: Array<{ text?: string }>;
      meta?: { agentMeta?: { usage?: { input?: number; output?: number } }; finalAssistantVisibleText?: string; error?: unknown; aborted?: boolean };
    };
    try {
      result = JSON.parse(out.slice(out.indexOf('{')));
    } catch {
      throw new AgentError(`openclaw printed no JSON result (exit code ${code})`, proc.stderrTail() || out.slice(-2000));
    }
    await this.recordTranscript(signal);
    if (code !== 0) throw new AgentError(`openclaw turn failed (exit code ${code})`, proc.stderrTail());
    const response = result.meta?.finalAssistantVisibleText ?? (result.payloads ?? []).map((p) => p.text ?? '').join('\n');
    const usage = result.meta?.agentMeta?.usage;
    return { response, usage: { input: usage?.input ?? 0, output: usage?.output ?? 0 } };
  }

  /**
   * Records the turn from OpenClaw's own transcript: what it said, and its native tool calls at
   * their own times — a call starts when the assistant message that made it was complete (or,
   * for exec, its result's time less the `durationMs` it reports) and ends with its result.
   * A failed gateway call is reported as meant for the gateway (an attempt unless the gateway saw it).
   */
  private async recordTranscript(signal: AbortSignal): Promise<void> {
    const db = `${this.home.path}/state/agents/main/agent/openclaw-agent.sqlite`;
    const out = await runHelper(
      this.spawn,
      'openclaw transcript reader',
      this.node,
      ['-e', TRANSCRIPT_READER, db, this.sessionId, String(this.transcriptSeq)],
      {
        signal,
        env: { NODE_NO_WARNINGS: '1' },
      },
    );
    const calls = new Map<string, { name: string; args: Record<string, unknown>; at: number | undefined }>();
    const prefix = `${this.ctx.gatewayName}__`;
    for (const line of out.split('\n')) {
      if (!line.trim()) continue;
      const { seq, event }: { seq: number; event: TranscriptEvent } = JSON.parse(line);
      this.transcriptSeq = Math.max(this.transcriptSeq, seq);
      const m = event.message;
      if (event.type !== 'message' || !m) continue;
      const written = epochMs(event.timestamp);
      const content = Array.isArray(m.content) ? m.content : [];
      if (m.role === 'assistant') {
        for (const c of content) {
          if (c.type === 'text' && c.text) this.ctx.recordMessage?.({ text: c.text, ...(written !== undefined ? { at: written } : {}) });
          else if (c.type === 'toolCall' && c.id && c.name) calls.set(c.id, { name: c.name, args: c.arguments ?? {}, at: written ?? epochMs(m.timestamp) });
        }
      } else if (m.role === 'toolResult' && m.toolCallId) {
        const call = calls.get(m.toolCallId);
        if (!call) continue;
        calls.delete(m.toolCallId);
        const output = content.map((c) => c.text ?? '').join('\n');
        const end = epochMs(m.timestamp) ?? written ?? Date.now();
        const reported = typeof m.details?.durationMs === 'number' ? end - m.details.durationMs : undefined;
        const at = reported ?? call.at ?? end;
        const timing = { at, durationMs: Math.max(0, end - at) };
        if (call.name.startsWith(prefix)) {
          if (m.isError === true) {
            this.ctx.recordNative({
              type: 'tool_call',
              tool: call.name.slice(prefix.length),
              agentTool: call.name,
              args: call.args,
              result: null,
              isError: true,
              error: output,
              origin: 'gateway',
              ...timing,
            });
          }
          continue;
        }
        const exitCode = typeof m.details?.exitCode === 'number' ? m.details.exitCode : undefined;
        const blocked = blockedReason(m.details, output);
        this.ctx.recordNative({
          type: 'tool_call',
          ...openClawNativeCall(call.name, call.args),
          result: { output, ...(exitCode !== undefined ? { exitCode } : {}), ...(m.details ? { details: m.details } : {}) },
          isError: m.isError === true || blocked !== undefined || (exitCode !== undefined && exitCode !== 0),
          origin: 'agent',
          ...(blocked !== undefined ? { attempted: { reason: blocked } } : {}),
          ...timing,
        });
      }
    }
  }
}
