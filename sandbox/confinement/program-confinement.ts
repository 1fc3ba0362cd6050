import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpawnOptions } from '../sandbox.js';
import { scratchPrefix, trackScratch, untrackScratch } from '../backends/scratch-dirs.js';
import { bubblewrapProgramArgs, bubblewrapUnavailable } from './bubblewrap-program.js';
import { LoopbackBridge, loopbackPort } from './loopback-bridge.js';
import { programEnv } from './program-env.js';

/**
 * How the in-process backend starts programs under test (CLI agents): `bubblewrap` (default)
 * confines each one — see `bubblewrap-program.ts`; where bubblewrap cannot run, starting one
 * fails with `ConfinementError` instead of running it on the host. `unconfined` is the explicit
 * opt-in to run them as plain host processes (still with a minimal environment); the report
 * says so.
 */
export type ProgramConfinementMode = 'bubblewrap' | 'unconfined';

/** What a run's programs actually ran under (recorded, and shown by the reports when it is `none`). */
export type ConfinementUsed = 'bubblewrap' | 'container' | 'none';

export class ConfinementError extends Error {
  constructor(reason: string) {
    super(
      `a program under test cannot be confined on this machine: ${reason}. Vera does not run an attacked agent unconfined on the host: ` +
        "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, run with the container backend (sandbox: 'container'), " +
        'or accept the risk explicitly with unconfined: true (the agent then sees your files and network)',
    );
    this.name = 'ConfinementError';
  }
}

/** A URL a confined program may not reach: only loopback endpoints can be relayed into its sandbox. */
export class UnreachableEndpointError extends Error {
  constructor(url: string) {
    super(
      `a confined agent has no network of its own, so it cannot reach ${url}: remote model endpoints are reached through the run-wide model proxy (on by default for remote providers; do not set provider: false), or a local server on 127.0.0.1`,
    );
    this.name = 'UnreachableEndpointError';
  }
}

/** Starts one sandbox's programs, confined; owns the scratch directory and the loopback bridge they share. */
export class ProgramConfinement {
  private scratchDir: string | undefined;
  private bridge: LoopbackBridge | undefined;
  private usedMode: ConfinementUsed | undefined;

  constructor(
    readonly mode: ProgramConfinementMode,
    /** The run's workspace (read lazily: it is created on first use). */
    private readonly workspace: () => string,
    private readonly scratchParent: string = tmpdir(),
    /** The bubblewrap program (default `bwrap` on PATH). */
    private readonly bwrap = 'bwrap',
  ) {}

  /** What the programs started so far ran under; undefined when none was started. */
  get used(): ConfinementUsed | undefined {
    return this.usedMode;
  }

  spawn(command: string, args: string[], options: SandboxSpawnOptions = {}): ChildProcess {
    const workspace = this.workspace();
    if (this.mode === 'unconfined') {
      this.usedMode = 'none';
      return spawn(command, args, { cwd: options.cwd ?? workspace, env: programEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    }
    const unavailable = bubblewrapUnavailable(this.bwrap);
    if (unavailable) throw new ConfinementError(unavailable);
    const ports: number[] = [];
    for (const url of options.network ?? []) {
      const port = loopbackPort(url);
      if (port === undefined) throw new UnreachableEndpointError(url);
      ports.push(port);
    }
    if (!this.scratchDir) {
      this.scratchDir = mkdtempSync(join(this.scratchParent, scratchPrefix('tmp')));
      trackScratch(this.scratchDir);
    }
    if (ports.length > 0) {
      this.bridge ??= new LoopbackBridge();
      for (const port of ports) this.bridge.allow(port);
    }
    this.usedMode = 'bubblewrap';
    const bwrapArgs = bubblewrapProgramArgs({
      command,
      args,
      cwd: options.cwd ?? workspace,
      workspace,
      scratch: this.scratchDir,
      bridgeDir: this.bridge?.dir ?? '',
      ports: [...new Set(ports)],
      readOnly: options.readOnly ?? [],
    });
    return spawn(this.bwrap, bwrapArgs, { cwd: '/', env: programEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  }

  dispose(): void {
    this.bridge?.close();
    if (this.scratchDir) {
      rmSync(this.scratchDir, { recursive: true, force: true });
      untrackScratch(this.scratchDir);
    }
    this.bridge = undefined;
    this.scratchDir = undefined;
  }
}
