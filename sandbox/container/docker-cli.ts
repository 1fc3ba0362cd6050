import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Small, dependency-free helpers over the `docker` CLI: whether an engine is reachable, which
 * sandbox containers exist (by label), and a synchronous removal for process-exit cleanup.
 */
const run = promisify(execFile);

/** The label every sandbox container carries; tests and the exit hook count and remove by it. */
export const SANDBOX_LABEL = 'vera.sandbox';

export interface DockerStatus {
  ok: boolean;
  /** Why Docker cannot be used (for skip messages and errors). */
  reason?: string;
}

/** Whether a Docker engine answers (`docker info`), synchronously, for `describe.skipIf`. */
export function dockerStatus(docker = 'docker'): DockerStatus {
  const result = spawnSync(docker, ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 15_000 });
  if (result.error) return { ok: false, reason: `the docker CLI could not be run (${(result.error as NodeJS.ErrnoException).code ?? result.error.message})` };
  if (result.status !== 0) {
    const detail = (result.stderr || result.stdout).trim().split('\n').at(-1) ?? '';
    return { ok: false, reason: `no Docker engine is reachable (${detail || `docker info exited ${result.status}`})` };
  }
  return { ok: true };
}

/** `dockerStatus`, without blocking the event loop (for the backend's error messages). */
export async function dockerEngineStatus(docker = 'docker'): Promise<DockerStatus> {
  try {
    await run(docker, ['info', '--format', '{{.ServerVersion}}'], { timeout: 15_000 });
    return { ok: true };
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string; stdout?: string; code?: string | number };
    if (e.code === 'ENOENT') return { ok: false, reason: `the docker CLI (${docker}) is not installed` };
    const detail = `${e.stderr ?? ''}${e.stdout ?? ''}`.trim().split('\n').at(-1) ?? '';
    return { ok: false, reason: `no Docker engine is reachable (${detail || e.message})` };
  }
}

/** Whether `image` exists locally. */
export async function imageExists(image: string, docker = 'docker'): Promise<boolean> {
  return run(docker, ['image', 'inspect', '--format', '{{.Id}}', image]).then(
    () => true,
    () => false,
  );
}

/** Ids of the containers (running or not) carrying every one of `labels`. */
export async function containersWithLabels(labels: Record<string, string>, docker = 'docker'): Promise<string[]> {
  const filters = Object.entries(labels).flatMap(([k, v]) => ['--filter', `label=${k}=${v}`]);
  const { stdout } = await run(docker, ['ps', '-aq', '--no-trunc', ...filters]);
  return stdout.split('\n').filter(Boolean);
}

/** Labels of one container, or undefined when it no longer exists. */
export async function containerLabels(id: string, docker = 'docker'): Promise<Record<string, string> | undefined> {
  try {
    const { stdout } = await run(docker, ['inspect', '--format', '{{json .Config.Labels}}', id]);
    return JSON.parse(stdout) as Record<string, string>;
  } catch {
    return undefined;
  }
}

/** `docker rm -f` without awaiting anything: usable from a process 'exit' handler. */
export function removeContainersSync(ids: readonly string[], docker = 'docker'): void {
  if (ids.length === 0) return;
  spawnSync(docker, ['rm', '-f', '-v', ...ids], { stdio: 'ignore', timeout: 30_000 });
}

export async function removeContainers(ids: readonly string[], docker = 'docker'): Promise<void> {
  if (ids.length === 0) return;
  await run(docker, ['rm', '-f', '-v', ...ids]).catch(() => {});
}

/**
 * Removes sandbox containers left by processes of this host that no longer exist (a worker
 * killed before its exit handler ran). Containers of live processes are never touched.
 */
export async function removeOrphanedSandboxes(host: string, docker = 'docker'): Promise<number> {
  let stdout: string;
  try {
    ({ stdout } = await run(docker, [
      'ps',
      '-a',
      '--no-trunc',
      '--filter',
      `label=${SANDBOX_LABEL}=1`,
      '--filter',
      `label=${SANDBOX_LABEL}.host=${host}`,
      '--format',
      `{{.ID}} {{.Label "${SANDBOX_LABEL}.pid"}}`,
    ]));
  } catch {
    return 0;
  }
  const orphans: string[] = [];
  for (const line of stdout.split('\n').filter(Boolean)) {
    const [id, pid] = line.split(' ');
    if (id && pid && /^\d+$/.test(pid) && !processAlive(Number(pid))) orphans.push(id);
  }
  await removeContainers(orphans, docker);
  return orphans.length;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
