import { modelEndpoint, type AgentAdapter, type AgentTurn } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { programRoots, spawnerOf, startAgentProcess, TurnProcesses } from './agent-process.js';
import { locateProgram } from './agent-programs.js';
import { ProgramSession, perTurnProgram } from './agent-session.js';

export interface McpCliAgentOptions {
  /** Names the agent in records, e.g. `my-cli`. */
  name: string;
  /** The program (absolute path, or a name found on PATH). */
  command: string;
  /**
   * Arguments for one turn. Placeholders: `{message}` the user message, `{gatewayUrl}`,
   * `{gatewayName}`, `{workspace}`, `{home}` (the session's private config dir), `{mcpConfig}`
   * (a JSON file `{"mcpServers": {"vera": {"type": "http", "url": …}}}` in it), `{turn}` (0-based),
   * `{modelBaseURL}` (the run's route to `modelBaseURL`).
   */
  args: string[];
  /** Extra environment variables; values may use the same placeholders. */
  env?: Record<string, string>;
  /** A turn that takes longer fails with the program's stderr tail (default 600). */
  turnTimeoutSeconds?: number;
  /**
   * The program's model endpoint. `{modelBaseURL}` in `args` and `env` becomes the run's route to
   * it — through the run-wide model proxy (limits, usage counted per run) and, for a scripted
   * model, under the run's token (its plan) — and a confined program may reach it.
   */
  modelBaseURL?: string;
  /**
   * Other endpoints the program may reach when confined (loopback URLs); the gateway and
   * `modelBaseURL` always are. Default: none.
   */
  network?: string[];
  /** Host paths the program reads (its scripts, beyond its own folder), visible read-only when confined. */
  readOnly?: string[];
}

/**
 * Any MCP-speaking command-line agent, given a command template: each turn runs the command in
 * the workspace with a private HOME, the gateway's URL (or an MCP config file naming it) filled
 * into its arguments; its stdout is the reply, a non-zero exit fails the run with the stderr tail.
 * It records no native actions (it cannot read an unknown program's events); its MCP calls are
 * recorded by the gateway.
 */
export function mcpCliAgent(options: McpCliAgentOptions): AgentAdapter {
  return {
    id: `mcp-cli:${options.name}`,
    async start(ctx) {
      const program = options.command.includes('/')
        ? locateProgram({ label: options.name, configured: options.command, envVar: 'VERA_MCP_CLI_BIN', installed: [] })
        : locateProgram({ label: options.name, envVar: 'VERA_MCP_CLI_BIN', installed: [], pathName: options.command });
      const model = options.modelBaseURL ? modelEndpoint(ctx, options.modelBaseURL) : undefined;
      const spawn = spawnerOf(ctx, {
        network: [...(model ? [model] : []), ...(options.network ?? [])],
        readOnly: [...programRoots([program]), ...(options.readOnly ?? [])],
      });
      const home = await AgentHome.create(spawn, 'mcp-cli', ctx.signal, [program]);
      let mcpConfig: string;
      try {
        mcpConfig = await home.write('mcp.json', JSON.stringify({ mcpServers: { [ctx.gatewayName]: { type: 'http', url: ctx.gatewayUrl } } }), ctx.signal);
      } catch (error) {
        await home.remove();
        throw error;
      }
      let turn = 0;
      const turns = new TurnProcesses();
      const fill = (template: string, message: string) =>
        template.replace(
          /\{(message|gatewayUrl|gatewayName|workspace|home|mcpConfig|turn|modelBaseURL)\}/g,
          (_, key: string) =>
            ({
              message,
              gatewayUrl: ctx.gatewayUrl,
              gatewayName: ctx.gatewayName,
              workspace: ctx.workspace,
              home: home.path,
              mcpConfig,
              turn: String(turn),
              modelBaseURL: model ?? '',
            })[key]!,
        );
      class McpCliSession extends ProgramSession {
        async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
          this.assertOpen();
          const env = Object.fromEntries(Object.entries(options.env ?? {}).map(([k, v]) => [k, fill(v, message)]));
          const proc = startAgentProcess(
            spawn,
            options.name,
            program,
            options.args.map((a) => fill(a, message)),
            { cwd: ctx.workspace, env: { HOME: home.path, ...env } },
          );
          turns.add(proc);
          proc.endInput();
          let out = '';
          proc.child.stdout?.on('data', (chunk: string) => (out += chunk));
          const timeoutMs = (options.turnTimeoutSeconds ?? 600) * 1000;
          const { code, signal } = await proc.race(proc.exited, { signal: sendOptions.signal ?? ctx.signal, timeoutMs, exitIsFailure: false });
          turn++;
          if (code !== 0 || signal) {
            proc.kill();
            throw proc.failure();
          }
          return { response: out.trim() };
        }
      }
      return new McpCliSession(options.name, perTurnProgram(turns), home);
    },
  };
}
