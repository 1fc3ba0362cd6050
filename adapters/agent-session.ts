import type { AgentProgram } from '../engine/record-schema.js';
import { AgentError, type AgentSession, type AgentTurn } from './adapter.js';
import type { AgentHome } from './agent-home.js';
import type { AgentProcess, TurnProcesses } from './agent-process.js';
import type { ProgramReport } from './agent-report.js';

/**
 * The one base of a started agent session, as testcontainers has one base for started things:
 * `close()` is idempotent — the first call runs `stop()`, every call waits for the same teardown —,
 * `await using` closes it, and a turn sent after close fails with an AgentError naming the agent.
 */
export abstract class StartedAgentSession implements AgentSession {
  private closing: Promise<void> | undefined;

  constructor(protected readonly agentName: string) {}

  abstract send(message: string, options?: { signal?: AbortSignal }): Promise<AgentTurn>;

  /** The teardown, run once. */
  protected abstract stop(): Promise<void>;

  protected get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Throws when the session is closed (at the start of every turn). */
  protected assertOpen(): void {
    if (this.closing) throw new AgentError(`${this.agentName} session is closed`);
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** What a CLI program's session ends on close, and where its last words are. */
export interface SessionProgram {
  diagnostics(): string;
  end(): Promise<void>;
}

/** A program started once per turn (Codex, Gemini CLI, OpenCode, OpenClaw, an MCP CLI): every turn's process tree ends. */
export function perTurnProgram(turns: TurnProcesses): SessionProgram {
  return { diagnostics: () => turns.diagnostics(), end: () => turns.endAll() };
}

/** A program that lives for the session (Claude Code's stream, Hermes over ACP): asked to end, then killed after `graceMs`. */
export function longLivedProgram(proc: AgentProcess, graceMs: number): SessionProgram {
  return { diagnostics: () => proc.stderrTail(), end: () => proc.endGracefully(graceMs) };
}

/**
 * A CLI agent's session: its program's diagnostics (the stderr tail) for records, its report when
 * the adapter keeps one, and on close its processes ended and its private home folder removed.
 */
export abstract class ProgramSession extends StartedAgentSession {
  constructor(
    agentName: string,
    private readonly sessionProgram: SessionProgram,
    protected readonly home: AgentHome,
    private readonly reportSource?: ProgramReport,
  ) {
    super(agentName);
  }

  diagnostics(): string {
    return this.sessionProgram.diagnostics();
  }

  report(): AgentProgram | undefined {
    return this.reportSource?.report();
  }

  protected async stop(): Promise<void> {
    await this.sessionProgram.end();
    await this.home.remove();
  }
}
