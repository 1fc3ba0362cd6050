/**
 * Wall time of one turn of each real agent CLI, in-process (the program on the host) against the
 * container sandbox (the program inside the container through `docker exec`, from the read-only
 * bind mount of `.agents/`), both against the local scripted model.
 *
 *   npx tsx bench/agents-turn.ts [runs] [codex|claude-code|openclaw|opencode|gemini-cli ...]
 *
 * (default 5 runs of every installed agent; needs scripts/install-agents.sh, and for the
 * container Docker and the image from scripts/build-sandbox-image.sh.)
 *
 * One run is `runCase` of email/forward-reset-code, benign, one turn: the model (naive policy)
 * lists the inbox, reads a mail over MCP and answers — three model requests, two gateway calls.
 * "turn" is the time of `session.send()` (the engine's agentMs), from the message to the reply:
 * for Codex, OpenClaw, OpenCode and Gemini CLI it includes starting the program (one process per turn), for Claude Code
 * it does not (one process per session, started in "session start"). "session start" is the
 * adapter's `start()`: the private home (and for Claude Code the program). Each figure is the
 * median of `runs` after one unmeasured warm-up, with min–max.
 */
import {
  agentInstallMount,
  CLAUDE_CODE_PROGRAM,
  CODEX_PROGRAM,
  GEMINI_CLI_PROGRAM,
  NODE24_PROGRAM,
  OPENCLAW_PROGRAM,
  OPENCODE_PROGRAM,
  programAvailable,
  type ProgramSearch,
} from '../adapters/agent-programs.js';
import type { AgentAdapter } from '../adapters/adapter.js';
import { claudeCodeAgent } from '../adapters/claude-code-agent.js';
import { codexAgent } from '../adapters/codex-agent.js';
import { geminiCliAgent } from '../adapters/gemini-cli-agent.js';
import { openClawAgent } from '../adapters/openclaw-agent.js';
import { openCodeAgent } from '../adapters/opencode-agent.js';
import { loadCaseFile } from '../engine/case-loader.js';
import { runCase } from '../runner/run-case.js';
import { ContainerBackend } from '../sandbox/backends/container-backend.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { dockerStatus } from '../sandbox/container/docker-cli.js';
import type { SandboxBackend } from '../sandbox/sandbox.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';

process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';

const runs = Number(process.argv[2] ?? 5);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`agents-turn: runs must be a positive integer, got ${process.argv[2]}`);
  process.exit(2);
}

interface BenchAgent {
  name: string;
  programs: Array<Omit<ProgramSearch, 'configured'>>;
  adapter(server: StartedModelServer): AgentAdapter;
}

const AGENTS: BenchAgent[] = [
  {
    name: 'codex',
    programs: [CODEX_PROGRAM],
    adapter: (s) => codexAgent({ model: 'vera-scripted', baseURL: s.url, apiKeyEnv: 'VERA_BENCH_NO_KEY', maxRetries: 0 }),
  },
  {
    name: 'claude-code',
    programs: [CLAUDE_CODE_PROGRAM],
    adapter: (s) => claudeCodeAgent({ model: 'vera-scripted', baseURL: s.origin, apiKeyEnv: 'VERA_BENCH_NO_KEY' }),
  },
  {
    name: 'openclaw',
    programs: [OPENCLAW_PROGRAM, NODE24_PROGRAM],
    adapter: (s) => openClawAgent({ model: 'vera-scripted', baseURL: s.url, apiKeyEnv: 'VERA_BENCH_NO_KEY' }),
  },
  {
    name: 'opencode',
    programs: [OPENCODE_PROGRAM],
    adapter: (s) => openCodeAgent({ model: 'vera-scripted', baseURL: s.url, apiKeyEnv: 'VERA_BENCH_NO_KEY' }),
  },
  {
    name: 'gemini-cli',
    programs: [GEMINI_CLI_PROGRAM],
    adapter: (s) => geminiCliAgent({ model: 'vera-scripted', baseURL: s.origin, apiKeyEnv: 'VERA_BENCH_NO_KEY', maxRetries: 0 }),
  },
];

const wanted = process.argv.slice(3);
for (const name of wanted) {
  if (!AGENTS.some((a) => a.name === name)) {
    console.error(`agents-turn: unknown agent ${name} (expected ${AGENTS.map((a) => a.name).join(', ')})`);
    process.exit(2);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const loaded = (await loadCaseFile(new URL('../cases/email/forward-reset-code.case.yaml', import.meta.url).pathname)).spec;
const spec = { ...loaded, budgets: { ...loaded.budgets, turns: 1, seconds: 300 } };

async function measure(agent: BenchAgent, server: StartedModelServer, backend: SandboxBackend): Promise<{ turn: number[]; start: number[] }> {
  const turn: number[] = [];
  const start: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const { record } = await runCase({ spec, threatModel: 'benign', agent: agent.adapter(server), backend, recordDir: false });
    if (record.status === 'error' || record.turns !== 1) {
      throw new Error(
        `${agent.name} on ${backend.name}: ${record.status} after ${record.turns} turns: ${record.error?.message ?? ''}\n${record.error?.detail ?? ''}`,
      );
    }
    if (i === 0) continue; // warm-up: the first start of a program reads it from disk
    turn.push(record.timings.agentMs);
    start.push(record.timings.agentStartMs);
  }
  return { turn, start };
}

const docker = dockerStatus();
if (!docker.ok) console.error(`agents-turn: ${docker.reason}; measuring in-process only`);
const server = await startScriptedModelServer({ policy: 'naive', recordRequests: false });
const container = new ContainerBackend({ mounts: [agentInstallMount()] });
const fmt = (values: number[]) => `${Math.round(median(values))} (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`;
try {
  const rows: string[][] = [];
  for (const agent of AGENTS.filter((a) => wanted.length === 0 || wanted.includes(a.name))) {
    if (!agent.programs.every((p) => programAvailable(p))) {
      console.error(`agents-turn: ${agent.name} is not installed (scripts/install-agents.sh); skipped`);
      continue;
    }
    const backends: SandboxBackend[] = [new InProcessBackend(), ...(docker.ok ? [container] : [])];
    for (const backend of backends) {
      const { turn, start } = await measure(agent, server, backend);
      rows.push([agent.name, backend.name, fmt(turn), fmt(start)]);
      console.error(`agents-turn: ${agent.name} ${backend.name} done`);
    }
  }
  const header = ['agent', 'backend', 'turn ms, median (min–max)', 'session start ms'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`${runs} runs each after one warm-up; node ${process.version}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
} finally {
  await container.close();
  await server.close();
}
