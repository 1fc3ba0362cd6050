import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import type { SandboxSpawnOptions } from '../sandbox.js';
import { scratchPrefix, trackScratch, untrackScratch } from '../backends/scratch-dirs.js';
import { bubblewrapProgramArgs, bubblewrapUnavailable } from './bubblewrap-program.js';
import { EgressProxy, type NetworkAttempt } from './egress-proxy.js';
import { LoopbackBridge, loopbackPort } from './loopback-bridge.js';
import { programEnv } from './program-env.js';
import { DEFAULT_RESOURCE_LIMITS, LimitGroup, type ResourceLimits } from './resource-limits.js';
import { VeraError } from '../../engine/errors.js';

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

export class ConfinementError extends VeraError {
  constructor(reason: string) {
    super(
      'CONFINEMENT_UNAVAILABLE',
      `a program under test cannot be confined on this machine: ${reason}. Vera does not run an attacked agent unconfined on the host: ` +
        "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, run with the container backend (sandbox: 'container'), " +
        'or accept the risk explicitly with unconfined: true (the agent then sees your files and network)',
    );
    this.name = 'ConfinementError';
  }
}

/** A URL a confined program may not reach: only loopback endpoints can be relayed into its sandbox. */
export class UnreachableEndpointError extends VeraError {
  constructor(url: string) {
    super(
      'ENDPOINT_UNREACHABLE',
      `a confined agent has no network of its own, so it cannot reach ${url}: remote model endpoints are reached through the run-wide model proxy (on by default for remote providers; do not set provider: false), or a local server on 127.0.0.1`,
    );
    this.name = 'UnreachableEndpointError';
  }
}

export interface ProgramConfinementOptions {
  mode: ProgramConfinementMode;
  /** The run's workspace (read lazily: it is created on first use). */
  workspace: () => string;
  /** Where the private scratch directory is made (default the OS temp dir). */
  scratchParent?: string;
  /** The bubblewrap program (default `bwrap` on PATH). */
  bwrap?: string;
  /** Destinations a confined program's requests may reach beyond the run's own (see `EgressProxyOptions.allow`). */
  egressAllow?: readonly string[];
  /** What each program tree may use (`resource-limits.ts`); default `DEFAULT_RESOURCE_LIMITS`. */
  limits?: ResourceLimits;
}

/** The port the recording egress proxy listens on inside a sandbox (a squid habit), unless the run uses it. */
const PROXY_PORT = 3128;

/**
 * Starts one sandbox's programs, confined; owns the scratch directory, the loopback bridge they
 * share and the recording egress proxy their HTTP(S)_PROXY variables point to.
 */
export class ProgramConfinement {
  readonly mode: ProgramConfinementMode;
  private scratchDir: string | undefined;
  private bridge: LoopbackBridge | undefined;
  private proxy: { server: EgressProxy; port: number } | undefined;
  /** Unconfined programs' recording egress proxy, on a loopback port of the host (see `start`). */
  private hostProxy: { server: EgressProxy; listener: Server; port: number } | undefined;
  private readonly allowedPorts = new Set<number>();
  private onAttempt: ((attempt: NetworkAttempt) => void) | undefined;
  private usedMode: ConfinementUsed | undefined;
  /** One limit group per program started; each is closed (what is left in it killed) when its program exits, and at dispose. */
  private readonly groups = new Set<LimitGroup>();

  constructor(private readonly options: ProgramConfinementOptions) {
    this.mode = options.mode;
  }

  /** What the programs started so far ran under; undefined when none was started. */
  get used(): ConfinementUsed | undefined {
    return this.usedMode;
  }

  /**
   * Gets ready to spawn: for unconfined programs, starts the recording egress proxy on a loopback
   * port of the host. It refuses nothing (they reach the network past it anyway) and records every
   * request of a program that honours HTTP(S)_PROXY; raw sockets are not seen. Confined programs
   * reach their proxy through the loopback bridge, started with the first of them.
   */
  async start(): Promise<this> {
    if (this.mode !== 'unconfined' || this.hostProxy) return this;
    const server = new EgressProxy({ internalPorts: () => this.allowedPorts, deliverAll: true, onAttempt: (attempt) => this.onAttempt?.(attempt) });
    const listener = createServer((socket) => server.handle(socket));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', () => resolve());
    });
    listener.unref();
    this.hostProxy = { server, listener, port: (listener.address() as AddressInfo).port };
    return this;
  }

  spawn(command: string, args: string[], options: SandboxSpawnOptions = {}): ChildProcess {
    const workspace = this.options.workspace();
    if (this.mode === 'unconfined') {
      this.usedMode = 'none';
      if (options.onNetworkAttempt) this.onAttempt = options.onNetworkAttempt;
      for (const url of options.network ?? []) {
        const port = loopbackPort(url);
        if (port !== undefined) this.allowedPorts.add(port);
      }
      const proxy = this.hostProxy ? proxyEnv(this.hostProxy.port) : {};
      // Its own cgroup (where one can be made): whatever it starts — setsid, double-forked — is
      // found there and ended when it exits or the sandbox goes, not left running on the host.
      return this.spawnLimited([command, ...args], { cwd: options.cwd ?? workspace, env: { ...programEnv(options.env), ...proxy } });
    }
    const bwrap = this.options.bwrap ?? 'bwrap';
    const unavailable = bubblewrapUnavailable(bwrap);
    if (unavailable) throw new ConfinementError(unavailable);
    const ports: number[] = [];
    for (const url of options.network ?? []) {
      const port = loopbackPort(url);
      if (port === undefined) throw new UnreachableEndpointError(url);
      ports.push(port);
    }
    if (!this.scratchDir) {
      this.scratchDir = mkdtempSync(join(this.options.scratchParent ?? tmpdir(), scratchPrefix('tmp')));
      trackScratch(this.scratchDir);
    }
    this.bridge ??= new LoopbackBridge();
    for (const port of ports) {
      this.bridge.allow(port);
      this.allowedPorts.add(port);
    }
    if (options.onNetworkAttempt) this.onAttempt = options.onNetworkAttempt;
    const proxy = this.startProxy(this.bridge);
    this.usedMode = 'bubblewrap';
    const bwrapArgs = bubblewrapProgramArgs({
      command,
      args,
      cwd: options.cwd ?? workspace,
      workspace,
      scratch: this.scratchDir,
      bridgeDir: this.bridge.dir,
      ports: [...new Set([...ports, proxy.port])],
      readOnly: options.readOnly ?? [],
    });
    return this.spawnLimited([bwrap, ...bwrapArgs], { cwd: '/', env: { ...programEnv(options.env), ...proxyEnv(proxy.port) } });
  }

  /**
   * Starts `argv` in a limit group of its own (`resource-limits.ts`), in its own process group;
   * the limit group is closed — whatever is left in it killed — when the program exits, and at dispose.
   */
  private spawnLimited(argv: string[], options: { cwd: string; env: Record<string, string> }): ChildProcess {
    const group = LimitGroup.create(this.options.limits ?? DEFAULT_RESOURCE_LIMITS);
    this.groups.add(group);
    const [bin, ...rest] = group.wrap(argv);
    const child = spawn(bin!, rest, { ...options, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    child.once('exit', () => {
      group.close();
      this.groups.delete(group);
    });
    return child;
  }

  /** The sandbox's recording egress proxy, on a port inside that no allowed endpoint uses (moved if a later program's does). */
  private startProxy(bridge: LoopbackBridge): { server: EgressProxy; port: number } {
    if (this.proxy && !this.allowedPorts.has(this.proxy.port)) return this.proxy;
    let port = PROXY_PORT;
    while (this.allowedPorts.has(port) || bridge.ports.includes(port)) port++;
    const server =
      this.proxy?.server ??
      new EgressProxy({
        internalPorts: () => this.allowedPorts,
        ...(this.options.egressAllow ? { allow: this.options.egressAllow } : {}),
        onAttempt: (attempt) => this.onAttempt?.(attempt),
      });
    bridge.serve(port, (socket) => server.handle(socket));
    this.proxy = { server, port };
    return this.proxy;
  }

  dispose(): void {
    for (const group of this.groups) group.close();
    this.groups.clear();
    this.proxy?.server.close();
    this.hostProxy?.server.close();
    this.hostProxy?.listener.close();
    this.hostProxy = undefined;
    this.bridge?.close();
    if (this.scratchDir) {
      rmSync(this.scratchDir, { recursive: true, force: true });
      untrackScratch(this.scratchDir);
    }
    this.proxy = undefined;
    this.bridge = undefined;
    this.scratchDir = undefined;
  }
}

/**
 * Every proxy variable proxy-aware clients read (curl, wget, Python, Rust's reqwest, Bun; Node
 * 24's fetch with NODE_USE_ENV_PROXY), pointing into the sandbox's proxy; no exceptions
 * (`NO_PROXY` empty), so even a request to a loopback port passes it and is seen.
 */
function proxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY: '',
    no_proxy: '',
    NODE_USE_ENV_PROXY: '1',
  };
}
