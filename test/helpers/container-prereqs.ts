import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { containersWithLabels, dockerStatus, SANDBOX_LABEL } from '../../sandbox/container/docker-cli.js';
import { REPO } from './run-vitest.js';

/**
 * What the container tests need: a Docker engine (checked once per file) and the sandbox image,
 * built (idempotently) with the registry-free script. Where Docker is absent the container
 * suites are skipped with the reason in their name — except in CI, where a test fails instead.
 */
const run = promisify(execFile);

// No registry is reachable here, so testcontainers' reaper (Ryuk) cannot be pulled; these tests
// count and remove their own containers instead. CI exports the same.
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';

export const docker = dockerStatus();
export const dockerMissing = !docker.ok;
export const skipNote = docker.ok ? '' : ` — SKIPPED: ${docker.reason}; the container backend needs a Docker engine (README "Container sandbox")`;

/** In CI the container tests must run: this one fails there when Docker is missing. */
export function requireDockerInCi(): void {
  it.runIf(process.env.CI === 'true')('Docker is available (required in CI)', () => {
    expect(docker.ok, `CI=true but ${docker.reason}: .ci/run must install docker.io and start dockerd`).toBe(true);
  });
}

/** Builds (or confirms) the sandbox image; a no-op when the content hash matches. */
export async function buildSandboxImage(): Promise<void> {
  await run('bash', [join(REPO, 'scripts/build-sandbox-image.sh')], { cwd: REPO, timeout: 300_000 });
}

/** A label value unique to one test file's containers, so files running in parallel do not count each other's. */
export function testLabel(name: string): Record<string, string> {
  return { 'vera.test': `${name}-${process.pid}-${Date.now().toString(36)}` };
}

export async function countContainers(labels: Record<string, string>): Promise<number> {
  return (await containersWithLabels({ [SANDBOX_LABEL]: '1', ...labels })).length;
}

export async function dockerExec(containerId: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('docker', ['exec', containerId, ...args]);
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 };
  }
}
