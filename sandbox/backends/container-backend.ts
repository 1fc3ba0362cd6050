import { hostname } from 'node:os';
import { removeOrphanedSandboxes } from '../container/docker-cli.js';
import { requireDockerEngine } from './container-instance.js';
import { defaultSandboxImage } from '../container/image.js';
import { ROUTES, startResponse } from '../container/protocol.js';
import type { SandboxBackend, SandboxSpec, StartedSandbox } from '../sandbox.js';
import { ContainerInstance, type ContainerInstanceConfig, type ContainerNetwork, type ReadOnlyMount } from './container-instance.js';
import { ContainerPool } from './container-pool.js';
import { ContainerSandbox } from './container-sandbox.js';

export interface ContainerBackendOptions {
  /** Image with the sandbox server (default `vera-sandbox:<package version>`, or VERA_SANDBOX_IMAGE). */
  image?: string;
  /**
   * Warm pool: keep up to `size` started containers and reset them between cases instead of
   * starting a new one per case. Reset restores the environments and the workspace and kills
   * every program the case started; other changes to the container's file system persist, so
   * use no pool (the default) when a CLI agent under test may write outside its workspace.
   */
  pool?: { size: number };
  /** Extra read-only bind mounts, e.g. an agent's install directory. */
  mounts?: ReadOnlyMount[];
  /** Extra environment variables of the container (and so of programs started with `spawn()`). */
  env?: Record<string, string>;
  /** Extra labels on every container (all carry `vera.sandbox=1`). */
  labels?: Record<string, string>;
  /** Default 60 s. */
  startupTimeoutMs?: number;
  /** Limit for one admin API request, e.g. one tool call (default 330 s: a shell command may run 300 s). */
  requestTimeoutMs?: number;
  /** The docker CLI for `spawn()` (default `docker`). */
  docker?: string;
  /** Most processes one container may hold (default 1024; 0 for no limit). */
  pidsLimit?: number;
  /**
   * Read-only root file system (default true): programs in the container may write only the
   * workspace, /tmp and HOME (/root), all tmpfs — a command that writes elsewhere fails, as under
   * bubblewrap in-process. Set false for an agent that must write elsewhere (e.g. install packages).
   */
  readOnlyRoot?: boolean;
  /**
   * How the host and the container reach each other (default: `exec-stream` when `DOCKER_HOST`
   * is set, to any value; `host` otherwise).
   *
   * - `host`: host networking. The admin API is on the host's 127.0.0.1, and a program started
   *   with `spawn()` reaches the gateway and model endpoint there directly — and every other
   *   port and address of the engine's machine. The engine must share this machine's network
   *   (a local dockerd, a second or rootless daemon).
   * - `exec-stream`: the container runs with network mode `none` (its own loopback only). One
   *   long-lived `docker exec -i … sandbox-server.mjs relay` per container carries the admin API
   *   and, for each `spawn()`, the loopback ports its `network` list names (relayed to the same
   *   ports on this host; nothing else is reachable) as multiplexed frames over its stdin/stdout,
   *   so the engine may be on another machine (`DOCKER_HOST=tcp://…` or `ssh://…`). Bind mounts
   *   (`mounts`, an agent's install folder) are paths on the engine's machine.
   */
  network?: ContainerNetwork;
}

/** The channel `ContainerBackendOptions.network` defaults to: an engine named by DOCKER_HOST may be on another machine. */
export function defaultContainerNetwork(env: NodeJS.ProcessEnv = process.env): ContainerNetwork {
  return env.DOCKER_HOST ? 'exec-stream' : 'host';
}

/**
 * Runs each case's sandbox in a Docker container through testcontainers: the environments and
 * the workspace live in the container (host networking with the admin API on 127.0.0.1, or the
 * exec-stream channel: `ContainerBackendOptions.network`), and
 * `spawn()` starts programs inside it, so a CLI agent's own shell and file actions change the
 * container, not the host. The recording gateway stays on the host. Containers are labelled
 * `vera.sandbox=1` and removed on `stop()`, on `close()`, and at the latest when the process exits.
 */
export class ContainerBackend implements SandboxBackend, AsyncDisposable {
  readonly name = 'container';
  private readonly config: ContainerInstanceConfig;
  private readonly pool: ContainerPool;
  private swept: Promise<unknown> | undefined;

  constructor(options: ContainerBackendOptions = {}) {
    this.config = {
      image: options.image ?? defaultSandboxImage(),
      mounts: options.mounts ?? [],
      env: options.env ?? {},
      labels: options.labels ?? {},
      startupTimeoutMs: options.startupTimeoutMs ?? 60_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 330_000,
      docker: options.docker ?? 'docker',
      pidsLimit: options.pidsLimit ?? 1024,
      readOnlyRoot: options.readOnlyRoot ?? true,
      network: options.network ?? defaultContainerNetwork(),
    };
    this.pool = new ContainerPool(options.pool?.size ?? 0, () => this.startContainer());
  }

  get image(): string {
    return this.config.image;
  }

  /** The channel this backend's containers use (`ContainerBackendOptions.network`). */
  get network(): ContainerNetwork {
    return this.config.network;
  }

  private async startContainer(): Promise<ContainerInstance> {
    // Once per backend: an engine must answer through the CLI (spawn and clean-up use it), then
    // containers left by dead processes of this host go first.
    this.swept ??= (async () => {
      await requireDockerEngine(this.config.docker);
      await removeOrphanedSandboxes(hostname(), this.config.docker);
    })();
    // A failed check is not kept: starting Docker mid-session should work.
    this.swept.catch(() => (this.swept = undefined));
    await this.swept;
    return ContainerInstance.start(this.config);
  }

  async start(spec: SandboxSpec): Promise<StartedSandbox> {
    const instance = await this.pool.acquire();
    try {
      const started = await instance.client.request(
        'POST',
        ROUTES.start,
        { environments: spec.environments, ...(spec.label ? { label: spec.label } : {}) },
        startResponse,
      );
      return new ContainerSandbox(instance, started.workspace, started.tools, (i) => this.pool.release(i));
    } catch (error) {
      await this.pool.release(instance).catch(() => {});
      throw error;
    }
  }

  /** Starts the pool's containers now, so the first cases do not wait for a cold start. */
  warm(): Promise<void> {
    return this.pool.warm();
  }

  /** How long each pooled container's reset between cases took, ms (for benchmarks and diagnostics). */
  get resetDurations(): readonly number[] {
    return this.pool.resetDurations;
  }

  /** Stops the pool's idle containers; sandboxes still running stop theirs on `stop()`. */
  close(): Promise<void> {
    return this.pool.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
