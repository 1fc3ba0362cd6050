import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { StartedTestContainer } from 'testcontainers';
import { SandboxAdminClient, SandboxServerError } from '../container/admin-client.js';
import { dockerEngineStatus, imageExists, removeContainers, removeContainersSync, SANDBOX_LABEL } from '../container/docker-cli.js';
import {
  ADMIN_SOCKET,
  EXEC_PID_DIR,
  healthResponse,
  killedResponse,
  READY_PREFIX,
  readyLine,
  ROUTES,
  SANDBOX_PROTOCOL,
  SERVER_ENV,
} from '../container/protocol.js';
import { ExecStreamLink } from '../container/stream-host.js';
import { loopbackPort } from '../confinement/loopback-bridge.js';
import { UnreachableEndpointError } from '../confinement/program-confinement.js';
import type { SandboxSpawnOptions } from '../sandbox.js';
import { VeraError } from '../../engine/errors.js';

/**
 * testcontainers, loaded on first use: it is an optional peer dependency (only this backend needs
 * it, and it brings a Docker client with native addons), so runs on the in-process backend never
 * install or load it. Missing, it is one error saying what to install.
 */
async function loadTestcontainers(): Promise<typeof import('testcontainers')> {
  try {
    return await import('testcontainers');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !/testcontainers/.test((error as Error).message)) throw error;
    throw new VeraError(
      'SANDBOX_START_FAILED',
      'sandbox: \'container\' needs the testcontainers package, which is not installed: npm install -D testcontainers@^11.9.0 (README "Container sandbox")',
      { cause: error },
    );
  }
}

/** The sandbox container died or vanished: the run it served cannot be judged on its final state. */
export class SandboxContainerError extends VeraError {
  constructor(message: string) {
    super('SANDBOX_FAILED', message);
    this.name = 'SandboxContainerError';
  }
}

export interface ReadOnlyMount {
  /** Host path. */
  source: string;
  /** Path inside the container. */
  target: string;
}

/**
 * How the host reaches a sandbox container and its programs reach the host: `host` networking
 * (everything on the host's 127.0.0.1; the engine must share this machine's network), or
 * `exec-stream` (the container has network mode `none`; the admin API and the loopback ports a
 * `spawn()` lists travel over one `docker exec -i` relay: sandbox/container/stream-host.ts).
 */
export type ContainerNetwork = 'host' | 'exec-stream';

export interface ContainerInstanceConfig {
  image: string;
  mounts: readonly ReadOnlyMount[];
  env: Record<string, string>;
  labels: Record<string, string>;
  startupTimeoutMs: number;
  requestTimeoutMs: number;
  /** The docker CLI used for `spawn()` (`docker exec`). */
  docker: string;
  /** Most processes the container may hold (a fork bomb stops there); 0 for no limit. */
  pidsLimit: number;
  /** Read-only root file system; only the workspace root, /tmp, HOME (/root) and /run/vera are writable (tmpfs). */
  readOnlyRoot: boolean;
  network: ContainerNetwork;
}

/** The writable places of a read-only sandbox container (tmpfs, so they vanish with it). */
const WRITABLE = {
  '/workspace': 'rw,exec,nosuid,nodev,mode=755',
  '/tmp': 'rw,exec,nosuid,nodev,mode=1777',
  '/root': 'rw,exec,nosuid,nodev,mode=700',
  '/run/vera': 'rw,noexec,nosuid,nodev,mode=755',
};

/**
 * Containers this process started and has not removed yet. A process that ends without stopping
 * them (a crashed worker, a forgotten pool, a test worker that Vitest ends with SIGTERM) removes
 * them on its way out; Ryuk, testcontainers' own reaper, needs a registry and is usually disabled
 * where Vera runs. A process killed with SIGKILL cannot: the next backend on this host removes
 * containers whose process is gone (`removeOrphanedSandboxes`).
 */
const live = new Map<string, string>();
const EXIT_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

function removeLive(): void {
  const byCli = new Map<string, string[]>();
  for (const [cid, cli] of live) byCli.set(cli, [...(byCli.get(cli) ?? []), cid]);
  live.clear();
  for (const [cli, ids] of byCli) removeContainersSync(ids, cli);
}

function onExitSignal(signal: NodeJS.Signals): void {
  removeLive();
  unhook();
  // Re-raise, so the process ends as it would have without this handler — unless another
  // handler is there to decide.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', removeLive);
  for (const signal of EXIT_SIGNALS) process.on(signal, onExitSignal);
}
function unhook(): void {
  if (!hooked) return;
  hooked = false;
  process.off('exit', removeLive);
  for (const signal of EXIT_SIGNALS) process.off(signal, onExitSignal);
}

/** The handlers are installed only while this process owns containers. */
function track(id: string, docker: string): void {
  live.set(id, docker);
  hook();
}
function untrack(id: string): void {
  live.delete(id);
  if (live.size === 0) unhook();
}

let execCounter = 0;

/**
 * One running sandbox container: the sandbox server in it, its admin API client, `docker exec`
 * for programs, and a watch on its log stream so a container that dies is noticed and described.
 */
export class ContainerInstance {
  private death: SandboxContainerError | undefined;
  private stopping: Promise<void> | undefined;
  private exitedAt: number | undefined;
  private readonly exited: Promise<void>;
  private readonly logTail: string[] = [];
  readonly client: SandboxAdminClient;

  private constructor(
    private readonly container: StartedTestContainer,
    private readonly config: ContainerInstanceConfig,
    token: string,
    baseUrl: string,
    logs: NodeJS.ReadableStream,
    /** The exec-stream channel (undefined on host networking). */
    private readonly link: ExecStreamLink | undefined,
  ) {
    this.exited = new Promise<void>((resolve) => {
      logs.on('end', () => {
        this.exitedAt ??= Date.now();
        resolve();
      });
      logs.on('error', () => resolve());
    });
    logs.on('data', (chunk: string | Buffer) => {
      for (const line of String(chunk).split('\n')) if (line.trim()) this.logTail.push(line.trim());
      if (this.logTail.length > 40) this.logTail.splice(0, this.logTail.length - 40);
    });
    this.client = new SandboxAdminClient({
      baseUrl,
      token,
      timeoutMs: config.requestTimeoutMs,
      onUnreachable: (route, cause) => this.describeDeath(route, cause),
    });
  }

  get id(): string {
    return this.container.getId();
  }

  get shortId(): string {
    return this.id.slice(0, 12);
  }

  /** False once the container is known to have died or been stopped (or, on exec-stream, its relay ended: it is unreachable). */
  get alive(): boolean {
    return !this.death && !this.stopping && this.exitedAt === undefined && (this.link?.alive ?? true);
  }

  /** The `docker exec` client of the exec-stream relay, on this host (tests check it is gone after stop). */
  get relayExecPid(): number | undefined {
    return this.link?.execPid;
  }

  static async start(config: ContainerInstanceConfig): Promise<ContainerInstance> {
    // (ContainerBackend checks the engine first; a missing image is told apart below.)
    // No mapped ports are ever used (host networking, or none). Without this, testcontainers,
    // when itself run in a container, looks up the engine's bridge gateway (a private-range
    // address, and absent under `dockerd --bridge=none`).
    process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
    const streamed = config.network === 'exec-stream';
    const { GenericContainer, Wait } = await loadTestcontainers();
    /** testcontainers has no builder for these host settings. */
    class SandboxContainerDefinition extends GenericContainer {
      withSandboxHostConfig(pidsLimit: number, readOnlyRoot: boolean): this {
        // An init process reaps the orphans of `docker exec`ed programs and forwards SIGTERM.
        this.hostConfig.Init = true;
        if (pidsLimit > 0) this.hostConfig.PidsLimit = pidsLimit;
        // Like bubblewrap in-process: a command may write its workspace (and scratch space), nothing else.
        if (readOnlyRoot) this.hostConfig.ReadonlyRootfs = true;
        return this;
      }
    }
    const token = randomBytes(24).toString('hex');
    const definition = new SandboxContainerDefinition(config.image)
      // exec-stream: its own loopback only; everything it may reach is relayed (stream-relay.ts).
      .withNetworkMode(streamed ? 'none' : 'host')
      .withSandboxHostConfig(config.pidsLimit, config.readOnlyRoot)
      .withTmpFs(config.readOnlyRoot ? WRITABLE : {})
      .withLabels({ ...config.labels, [SANDBOX_LABEL]: '1', [`${SANDBOX_LABEL}.pid`]: String(process.pid), [`${SANDBOX_LABEL}.host`]: hostname() })
      .withEnvironment({
        ...config.env,
        [SERVER_ENV.port]: '0',
        [SERVER_ENV.inContainer]: '1',
        ...(streamed ? { [SERVER_ENV.socket]: ADMIN_SOCKET } : {}),
      })
      .withBindMounts(config.mounts.map((m) => ({ source: m.source, target: m.target, mode: 'ro' as const })))
      .withWaitStrategy(Wait.forLogMessage(READY_PREFIX))
      .withStartupTimeout(config.startupTimeoutMs);

    let container: StartedTestContainer;
    try {
      container = await definition.start();
    } catch (error) {
      const message = (error as Error).message;
      // Two different fixes, so two different errors: start Docker, or build the image.
      await requireDockerEngine(config.docker);
      if (!(await imageExists(config.image, config.docker))) {
        throw new SandboxContainerError(
          `sandbox image ${config.image} is not available: build it with \`npx vera sandbox-image\` (no registry needed) ` +
            `or docker build -f docker/Dockerfile -t ${config.image} . — see README "Container sandbox"`,
        );
      }
      const hint = /ryuk/i.test(message)
        ? ' (testcontainers could not start its reaper, Ryuk: set TESTCONTAINERS_RYUK_DISABLED=true where no registry is reachable)'
        : '';
      throw new SandboxContainerError(`sandbox container (${config.image}) failed to start: ${message}${hint}`);
    }
    track(container.getId(), config.docker);
    let link: ExecStreamLink | undefined;
    try {
      const logs = await container.logs();
      const ready = await readyInfo(logs, config.startupTimeoutMs);
      if (streamed) {
        // An older image has no relay (its server would start a second server instead): tell it here.
        if (ready.protocol !== SANDBOX_PROTOCOL) throw protocolMismatch(config.image, ready.protocol);
        link = await ExecStreamLink.start({ docker: config.docker, containerId: container.getId(), timeoutMs: config.startupTimeoutMs });
      }
      const baseUrl = link ? link.baseUrl : `http://127.0.0.1:${ready.port}`;
      const instance = new ContainerInstance(container, config, token, baseUrl, logs, link);
      // Claimed before any other program runs in the container (see protocol.ts).
      const health = await instance.client.request('POST', ROUTES.claim, { token }, healthResponse).catch((error: Error) => {
        // A server from an older image has no claim route (404) or wants a token it was never given (401).
        if (error instanceof SandboxServerError && (error.status === 404 || error.status === 401)) return { protocol: 0, started: false };
        throw error;
      });
      if (health.protocol !== SANDBOX_PROTOCOL) throw protocolMismatch(config.image, health.protocol);
      return instance;
    } catch (error) {
      await link?.close();
      untrack(container.getId());
      await container.stop({ remove: true, timeout: 0 }).catch(() => removeContainers([container.getId()], config.docker));
      throw error;
    }
  }

  /** The error for a request that could not reach the server: did the container die, vanish, or only its server? */
  private async describeDeath(route: string, cause: Error): Promise<Error> {
    if (this.death) return this.death;
    if (this.stopping) return new SandboxContainerError(`sandbox container ${this.shortId} was stopped (${route} after stop())`);
    // The socket closes a moment before the engine reports the exit; give it that moment.
    // (A timer that holds the process: unref'd, a script whose only other handle is the log
    // stream, which testcontainers unrefs, would exit here with the run unfinished.)
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
    let state: { Running?: boolean; ExitCode?: number; OOMKilled?: boolean; Status?: string } | undefined;
    try {
      const { getContainerRuntimeClient } = await loadTestcontainers();
      const client = await getContainerRuntimeClient();
      state = (await client.container.inspect(client.container.getById(this.id))).State;
    } catch {
      state = undefined;
    }
    // The exec-stream relay ending is the first sign of a container that died, or the cause when it alone did.
    const relay = this.link && !this.link.alive ? `; ${(await this.link.ended).message}` : '';
    const where = `noticed at ${route}: ${cause.message}${relay}`;
    const logs = this.logTail.length ? `; last log lines: ${this.logTail.slice(-5).join(' | ')}` : '';
    let message: string;
    if (!state) {
      message = `sandbox container ${this.shortId} (${this.config.image}) died: it was removed while the run was in progress (${where})`;
    } else if (!state.Running) {
      const how = state.OOMKilled ? ', out of memory' : state.ExitCode === 137 ? ', killed' : '';
      message = `sandbox container ${this.shortId} (${this.config.image}) died: it exited with code ${state.ExitCode}${how} (${where})${logs}`;
    } else {
      // Running, but the server is gone or wedged: as dead for this run.
      message = `sandbox container ${this.shortId} (${this.config.image}) is running but its sandbox server does not answer (${where})${logs}`;
    }
    this.death = new SandboxContainerError(message);
    return this.death;
  }

  /**
   * Runs `command` inside the container through `docker exec -i`, stdio piped (see
   * StartedSandbox.spawn). On the exec-stream channel the loopback URLs of `options.network`
   * are relayed first (only those: the container has no other network), and the program starts
   * once the relay listens — its shell line waits for the relay's marker, so spawn() stays synchronous.
   */
  spawn(command: string, args: string[], options: SandboxSpawnOptions & { cwd: string }): ChildProcess {
    const execId = `x${process.pid}-${++execCounter}`;
    let wait = '';
    if (this.link) {
      const ports = (options.network ?? []).map((url) => {
        const port = loopbackPort(url);
        if (port === undefined) throw new UnreachableEndpointError(url);
        return port;
      });
      if (!this.link.alive) {
        // Nothing would write the marker: fail now rather than after the wait's 10 s.
        wait = `echo "vera: the exec-stream relay of this container has ended" >&2; exit 125; `;
      } else if (ports.length > 0) {
        this.link.allow(execId, ports);
        wait = ExecStreamLink.waitLine(execId);
      }
    }
    // Names only: `docker exec -e NAME` takes the value from the CLI's own environment, so API
    // keys handed to an agent never appear in the host's process list.
    const env = Object.keys(options.env ?? {}).flatMap((k) => ['-e', k]);
    // The shell records the program's PID (exec keeps it), so when the host side ends the
    // sandbox server can kill the program's tree: killing `docker exec` alone does not.
    const record = `${wait}mkdir -p ${EXEC_PID_DIR} && echo $$ > ${EXEC_PID_DIR}/${execId}.pid && exec "$@"`;
    const child = spawn(this.config.docker, ['exec', '-i', '-w', options.cwd, ...env, this.id, '/bin/sh', '-c', record, 'vera-exec', command, ...args], {
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    child.once('exit', () => {
      if (!this.alive) return;
      this.client.request('POST', ROUTES.execKill, { id: execId }, killedResponse).catch(() => {});
    });
    return child;
  }

  /**
   * Readies the container for the next case (the pool): every process but the server (and the
   * relay) is killed, the environments and scratch space emptied, the relayed ports revoked.
   */
  async reset(): Promise<void> {
    await this.client.request('POST', ROUTES.reset, { keep: this.link ? [this.link.relayPid] : [] }, killedResponse);
    this.link?.revoke();
  }

  /** Stops and removes the container; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.link?.close();
      try {
        await this.container.stop({ remove: true, timeout: 0 });
      } catch {
        // Already gone, or the engine refused: make sure with the CLI.
        await removeContainers([this.id], this.config.docker);
      }
      untrack(this.id);
    })();
    return this.stopping;
  }
}

function protocolMismatch(image: string, protocol: number): SandboxContainerError {
  return new SandboxContainerError(
    `sandbox image ${image} speaks admin protocol ${protocol}, this vera-safety speaks ${SANDBOX_PROTOCOL}: rebuild the image (scripts/build-sandbox-image.sh)`,
  );
}

type ReadyInfo = ReturnType<typeof readyLine.parse>;

/** Reads the server's ready line from the container's log stream: its port (or socket) and protocol. */
function readyInfo(logs: NodeJS.ReadableStream, timeoutMs: number): Promise<ReadyInfo> {
  return new Promise<ReadyInfo>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => finish(new SandboxContainerError(`sandbox server printed no ready line within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: string | Buffer) => {
      buffer += String(chunk);
      const start = buffer.indexOf(READY_PREFIX);
      if (start < 0) return;
      const end = buffer.indexOf('\n', start);
      if (end < 0) return;
      let json: unknown;
      try {
        json = JSON.parse(buffer.slice(start + READY_PREFIX.length, end));
      } catch {
        json = undefined;
      }
      const parsed = readyLine.safeParse(json);
      finish(parsed.success ? parsed.data : new SandboxContainerError(`sandbox server printed a malformed ready line: ${buffer.slice(start, end)}`));
    };
    const onEnd = () => finish(new SandboxContainerError(`sandbox container exited before its server was ready; logs: ${buffer.slice(-500)}`));
    const finish = (result: ReadyInfo | Error) => {
      clearTimeout(timer);
      logs.off('data', onData);
      logs.off('end', onEnd);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    logs.on('data', onData);
    logs.on('end', onEnd);
  });
}

/** Throws the "start Docker" error when no engine answers the docker CLI. */
export async function requireDockerEngine(docker: string): Promise<void> {
  const engine = await dockerEngineStatus(docker);
  if (!engine.ok) {
    throw new SandboxContainerError(
      `the container sandbox needs a Docker engine: ${engine.reason}. Start Docker (or set DOCKER_HOST), or run with sandbox: 'in-process'`,
    );
  }
}
