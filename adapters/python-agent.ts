import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError, type AgentAdapter, type AgentStartContext, type AgentTurn, modelEndpoint } from './adapter.js';
import { AgentHome } from './agent-home.js';
import { ProgramReport } from './agent-report.js';
import { ProgramSession, longLivedProgram } from './agent-session.js';
import { programRoots, spawnerOf, startAgentProcess, type AgentProcess } from './agent-process.js';
import { locateProgram, type CliProgramOptions } from './agent-programs.js';

export interface PythonAgentOptions extends CliProgramOptions {
  /** The agent's function as `module:function` (`my_agent:run`); it gets `(message, ctx)` and returns the reply. */
  entry: string;
  /** The interpreter that has the agent's packages (default: VERA_PYTHON, then `python3` on PATH), e.g. `.venv/bin/python`. */
  python?: string;
  /** Folders the entry's module is imported from, as PYTHONPATH (default: the current directory); the confined agent reads them. */
  pythonPath?: string[];
  /** Model name the agent is told to use (`ctx.model.model`). */
  model: string;
  /** OpenAI-compatible endpoint the agent calls (default OPENAI_BASE_URL, then https://api.openai.com/v1); through the run's model proxy when there is one. */
  baseURL?: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY), passed as OPENAI_API_KEY. */
  apiKeyEnv?: string;
}

/** `python/` of this package: the `vera_agent` host, importable with no install (dist/adapters or adapters → ../..). */
function veraPythonDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    if (existsSync(join(dir, 'python', 'vera_agent', 'host.py'))) return join(dir, 'python');
    dir = dirname(dir);
  }
  throw new AgentError('vera-safety is missing its python/vera_agent folder (a broken install?)');
}

const versions = new Map<string, string | undefined>();

/** `3.11.7` of an interpreter, asked once per path. */
function pythonVersion(python: string): string | undefined {
  if (!versions.has(python)) {
    try {
      versions.set(python, execFileSync(python, ['-c', 'import sys; print(sys.version.split()[0])'], { encoding: 'utf8', timeout: 10_000 }).trim());
    } catch {
      versions.set(python, undefined);
    }
  }
  return versions.get(python);
}

/**
 * A Python agent under test, through one contract: Vera starts `python -m vera_agent.host <entry>`
 * once per session (confined like the CLI agents), hands it the model endpoint, the gateway's MCP
 * URL and the workspace in its environment, and one JSON line per turn on stdin; the agent's
 * function answers with its reply (python/vera_agent). Any framework that can be pointed at an
 * OpenAI-compatible endpoint and an MCP server works without glue; the agent's own exception
 * fails the run with its Python traceback as the error's detail.
 */
export function pythonAgent(options: PythonAgentOptions): AgentAdapter {
  return {
    id: `python:${options.entry}`,
    async start(ctx) {
      const configured = options.python ?? process.env.VERA_PYTHON;
      const python = locateProgram({
        label: 'python (for a Python agent)',
        envVar: 'VERA_PYTHON',
        installed: [],
        pathName: 'python3',
        ...(configured ? { configured: isAbsolute(configured) || configured.includes('/') ? resolve(configured) : configured } : {}),
      });
      const paths = (options.pythonPath ?? [process.cwd()]).map((p) => resolve(p));
      const hostDir = veraPythonDir();
      const endpoint = modelEndpoint(ctx, options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
      // A venv's `bin/python` links to the Python it was made from; its packages are in the venv itself.
      const venv = dirname(dirname(python));
      const venvRoot = existsSync(join(venv, 'pyvenv.cfg')) ? [venv] : [];
      const spawn = spawnerOf(ctx, {
        network: [endpoint],
        readOnly: [...programRoots([python]), ...venvRoot, hostDir, ...paths, ...(options.readOnly ?? [])],
      });
      const home = await AgentHome.create(spawn, 'python', ctx.signal, [python]);
      const report = new ProgramReport('python', python, pythonVersion(python));
      report.addConfig('command line', `${python} -m vera_agent.host ${options.entry}`);
      report.addConfig(
        'environment',
        [
          `VERA_MODEL=${options.model}`,
          `VERA_MODEL_BASE_URL=${endpoint}`,
          `VERA_GATEWAY_URL=${ctx.gatewayUrl}`,
          `VERA_AGENT_PATH=${paths.join(delimiter)}`,
        ].join('\n'),
      );
      let proc: AgentProcess | undefined;
      try {
        proc = startAgentProcess(spawn, 'python', python, ['-m', 'vera_agent.host', options.entry], {
          cwd: ctx.workspace,
          env: {
            ...options.env,
            HOME: home.path,
            PYTHONPATH: [hostDir, process.env.PYTHONPATH].filter(Boolean).join(delimiter),
            PYTHONUNBUFFERED: '1',
            PYTHONDONTWRITEBYTECODE: '1',
            VERA_AGENT_PATH: paths.join(delimiter),
            VERA_MODEL: options.model,
            VERA_MODEL_BASE_URL: endpoint,
            VERA_GATEWAY_URL: ctx.gatewayUrl,
            VERA_GATEWAY_NAME: ctx.gatewayName,
            VERA_WORKSPACE: ctx.workspace,
            OPENAI_API_KEY: process.env[options.apiKeyEnv ?? 'OPENAI_API_KEY'] ?? 'no-key',
          },
        });
        const session = new PythonAgentSession(options, ctx, proc, home, report);
        await session.ready();
        return session;
      } catch (error) {
        proc?.kill();
        await home.remove();
        throw error;
      }
    },
  };
}

type HostMessage =
  | { type: 'ready' }
  | { type: 'reply'; response: string; usage?: { input?: number; output?: number } }
  | { type: 'error'; kind: string; message: string; traceback: string };

class PythonAgentSession extends ProgramSession {
  private waiter: { resolve: (m: HostMessage) => void } | undefined;
  private readonly early: HostMessage[] = [];

  constructor(
    private readonly options: PythonAgentOptions,
    private readonly ctx: AgentStartContext,
    private readonly proc: AgentProcess,
    home: AgentHome,
    private readonly programReport: ProgramReport,
  ) {
    super('python', longLivedProgram(proc, 1000), home, programReport);
    proc.onLine((line) => {
      let message: HostMessage;
      try {
        message = JSON.parse(line) as HostMessage;
      } catch {
        return; // the host keeps stdout for protocol lines; the agent's prints go to stderr
      }
      if (this.waiter) this.waiter.resolve(message);
      else this.early.push(message);
    });
  }

  private next(signal: AbortSignal): Promise<HostMessage> {
    const queued = this.early.shift();
    if (queued) return Promise.resolve(queued);
    const message = new Promise<HostMessage>((resolve) => (this.waiter = { resolve }));
    return this.proc.race(message, { signal, timeoutMs: (this.options.turnTimeoutSeconds ?? 600) * 1000 }).finally(() => (this.waiter = undefined));
  }

  /** The agent's function imported: an import error (a missing module, a syntax error) fails the start with its traceback. */
  async ready(): Promise<void> {
    const first = await this.next(this.ctx.signal);
    if (first.type === 'error') throw new AgentError(`python agent ${this.options.entry} did not load: ${first.kind}: ${first.message}`, first.traceback);
  }

  async send(message: string, sendOptions: { signal?: AbortSignal } = {}): Promise<AgentTurn> {
    this.assertOpen();
    if (!this.proc.running) throw this.proc.failure();
    const signal = sendOptions.signal ?? this.ctx.signal;
    const answer = await this.programReport.during(this.proc, async () => {
      try {
        this.proc.write(`${JSON.stringify({ type: 'turn', message })}\n`);
        return await this.next(signal);
      } catch (error) {
        this.proc.kill();
        throw error;
      }
    });
    // The agent's own exception: its Python stack is the detail, so the record points at the user's code.
    if (answer.type === 'error') throw new AgentError(`python agent ${this.options.entry} raised ${answer.kind}: ${answer.message}`, answer.traceback);
    if (answer.type !== 'reply') throw new AgentError(`python agent host sent "${answer.type}" where a reply was expected`, this.proc.stderrTail());
    return { response: answer.response, usage: { input: answer.usage?.input ?? 0, output: answer.usage?.output ?? 0 } };
  }
}
