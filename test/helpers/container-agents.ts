import type { ContainerBackend } from '../../sandbox/backends/container-backend.js';
import type { ContainerSandbox } from '../../sandbox/backends/container-sandbox.js';
import type { SandboxBackend, SandboxSpec, SandboxSpawnOptions, StartedSandbox } from '../../sandbox/sandbox.js';
import { dockerExec } from './container-prereqs.js';

/**
 * Test tooling for agent CLIs run inside the container sandbox: a backend that remembers each
 * sandbox's container and the programs started in it, and can look inside the container just
 * before it is removed (after the agent session was closed), plus a process listing that
 * leaves out the container's own processes.
 */
export interface ContainerRun {
  containerId: string;
  /** The run's workspace inside the container. */
  workspace: string;
  /** Every program started through the sandbox's spawn, in order. */
  spawns: Array<{ command: string; args: string[]; env: Record<string, string> }>;
  /** What the `beforeStop` probe stored. */
  atStop: Record<string, unknown>;
}

export class ProbedContainerBackend implements SandboxBackend {
  readonly name = 'container';
  readonly runs: ContainerRun[] = [];

  constructor(
    private readonly inner: ContainerBackend,
    /** Runs after the agent session is closed and before the container is removed. */
    private readonly beforeStop?: (run: ContainerRun) => Promise<void>,
  ) {}

  async start(spec: SandboxSpec): Promise<StartedSandbox> {
    const sandbox = (await this.inner.start(spec)) as ContainerSandbox;
    const run: ContainerRun = { containerId: sandbox.containerId, workspace: sandbox.workspace, spawns: [], atStop: {} };
    this.runs.push(run);
    const beforeStop = this.beforeStop;
    let stopping: Promise<void> | undefined;
    return new Proxy(sandbox, {
      get(target, key, receiver) {
        if (key === 'spawn') {
          return (command: string, args: string[], options: SandboxSpawnOptions = {}) => {
            run.spawns.push({ command, args, env: { ...options.env } });
            return target.spawn(command, args, options);
          };
        }
        if (key === 'stop') {
          return () =>
            (stopping ??= (async () => {
              try {
                await beforeStop?.(run);
              } catch (error) {
                run.atStop.probeError = (error as Error).message;
              }
              await target.stop();
            })());
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /** The last sandbox started. */
  get last(): ContainerRun {
    const run = this.runs.at(-1);
    if (!run) throw new Error('no sandbox was started');
    return run;
  }
}

/** The agent program's spawn in a run: the one given a private HOME (helpers get none). */
export function agentSpawn(run: ContainerRun): ContainerRun['spawns'][number] | undefined {
  return run.spawns.find((s) => s.env.HOME?.includes('/vera-'));
}

/** Processes in the container (`pid args`), without its init, the sandbox server and this `ps`. */
export async function containerProcesses(containerId: string): Promise<string[]> {
  const { stdout, code, stderr } = await dockerExec(containerId, ['ps', '-eo', 'pid=,args=']);
  if (code !== 0) throw new Error(`ps in ${containerId.slice(0, 12)} failed: ${stderr}`);
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .filter((l) => {
      const [pid, ...rest] = l.split(/\s+/);
      const args = rest.join(' ');
      return pid !== '1' && !args.includes('/opt/vera/sandbox-server.mjs') && !args.startsWith('ps -eo');
    });
}

/**
 * Waits until nothing but the container's own processes is left, and returns what is left then
 * (empty on success). The host ends a program's tree in the container by an admin request sent
 * when its `docker exec` client exits, so the end is asynchronous: this waits for it, up to
 * `ms`, and never passes because of time.
 */
export async function leftoverProcesses(containerId: string, ms = 20_000): Promise<string[]> {
  const end = Date.now() + ms;
  let left = await containerProcesses(containerId);
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
    left = await containerProcesses(containerId);
  }
  return left;
}
