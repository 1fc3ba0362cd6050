import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isPlainObject } from '../engine/json.js';
import type { AgentProgram, AgentTurnReport } from '../engine/record-schema.js';
import type { AgentProcess } from './agent-process.js';

/** The record keeps this much of a turn's stderr: enough for the error, not a log file per turn. */
const STDERR_CHARS = 2000;

/** What a secret in a generated config reads as in the record. */
export const REDACTED = '[redacted by vera]';

const versions = new Map<string, string | undefined>();

/**
 * The version of the npm package a program file belongs to: the nearest package.json above it
 * with a name and a version (links followed: `.bin/codex` is `@openai/codex/bin/codex.js`).
 * Read once per path, so a session start pays nothing after the first.
 */
export function packageVersion(program: string): string | undefined {
  if (versions.has(program)) return versions.get(program);
  let version: string | undefined;
  try {
    let dir = dirname(realpathSync(program));
    for (let depth = 0; depth < 5 && version === undefined; depth++) {
      try {
        const pkg: unknown = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        if (isPlainObject(pkg) && typeof pkg.name === 'string' && typeof pkg.version === 'string') version = pkg.version;
      } catch {
        // No package.json here (or a partial one, e.g. `{"type":"module"}` in a dist folder): go up.
      }
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  } catch {
    // The program is gone or unreadable: no version, and the run says so by leaving it out.
  }
  versions.set(program, version);
  return version;
}

/**
 * The version of a Python distribution installed beside a program in a virtual environment
 * (`<venv>/bin/hermes` → `<venv>/lib/python3.X/site-packages/hermes_agent-0.19.0.dist-info`), from
 * the dist-info folder's name. The program's own path is not resolved: a venv's scripts are files
 * in its `bin`, and its `python` links out of it.
 */
export function pythonPackageVersion(program: string, distribution: string): string | undefined {
  const key = `${program}\0${distribution}`;
  if (versions.has(key)) return versions.get(key);
  let version: string | undefined;
  try {
    const lib = join(dirname(dirname(program)), 'lib');
    const prefix = `${distribution.replace(/-/g, '_')}-`;
    for (const python of readdirSync(lib).filter((d) => d.startsWith('python'))) {
      const info = readdirSync(join(lib, python, 'site-packages')).find((d) => d.startsWith(prefix) && d.endsWith('.dist-info'));
      if (info) version = info.slice(prefix.length, -'.dist-info'.length);
    }
  } catch {
    // Not a virtual environment's script: no version, and the record leaves it out.
  }
  versions.set(key, version);
  return version;
}

/**
 * The record's account of an agent program (`AgentSession.report`): the adapter adds the config
 * it generated and opens one entry per turn, which it fills when the turn's program ends — also
 * when the turn failed, which is when the exit code and the stderr matter most.
 */
export class ProgramReport {
  private readonly config: AgentProgram['config'] = [];
  private readonly turns: AgentTurnReport[] = [];

  constructor(
    private readonly name: string,
    private readonly path: string,
    /** Set when the program says it itself (Claude Code's init event); else its package's. */
    public version = packageVersion(path),
  ) {}

  addConfig(name: string, content: string): void {
    this.config.push({ name, content });
  }

  beginTurn(): AgentTurnReport {
    const entry: AgentTurnReport = { turn: this.turns.length + 1 };
    this.turns.push(entry);
    return entry;
  }

  /** How the turn's program ended (`exit` absent for a program that outlives its turns) and what it wrote to stderr meanwhile. */
  endTurn(entry: AgentTurnReport, stderr: string, exit?: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (exit) {
      entry.exitCode = exit.code;
      if (exit.signal) entry.signal = exit.signal;
    }
    const tail = stderr.length > STDERR_CHARS ? `…${stderr.slice(-STDERR_CHARS)}` : stderr;
    if (tail) entry.stderrTail = tail;
  }

  /** `work` as one turn of a program that lives through the session: its stderr meanwhile, and an exit only when it died. */
  async during<T>(proc: Pick<AgentProcess, 'stderrMark' | 'stderrSince' | 'exit'>, work: () => Promise<T>): Promise<T> {
    const entry = this.beginTurn();
    const mark = proc.stderrMark();
    try {
      return await work();
    } finally {
      this.endTurn(entry, proc.stderrSince(mark), proc.exit);
    }
  }

  report(): AgentProgram {
    return {
      name: this.name,
      ...(this.version ? { version: this.version } : {}),
      path: this.path,
      config: this.config.map((c) => ({ ...c })),
      turns: this.turns.map((t) => ({ ...t })),
    };
  }
}
