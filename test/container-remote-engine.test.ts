/**
 * The container sandbox on another Docker engine — the way past one machine's cores: a second
 * dockerd on a unix socket of its own (its own data root; no bridge, host networking, as here),
 * the sandbox image loaded into it, and a case run with `DOCKER_HOST` pointing at it. The run's
 * container must be on that engine and not on the local one; without `DOCKER_HOST` it is the
 * other way round, which shows the count tells the engines apart. Needs root and dockerd (CI).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxImage } from '../sandbox/container/image.js';
import { buildSandboxImage, dockerMissing, requireDockerInCi, skipNote } from './helpers/container-prereqs.js';
import { REPO } from './helpers/run-vitest.js';

const run = promisify(execFile);
const LOCAL_SOCKET = '/var/run/docker.sock';
const canRunSecondEngine = !dockerMissing && process.getuid?.() === 0 && existsSync(LOCAL_SOCKET);

requireDockerInCi();

interface ProbeResult {
  status: string;
  error?: string;
  seen: { local: number; remote: number };
  wrote: string | null;
  after: { local: number; remote: number };
}

async function probe(label: string, remoteSocket: string, dockerHost: string | undefined): Promise<ProbeResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, TESTCONTAINERS_RYUK_DISABLED: 'true' };
  if (dockerHost) env.DOCKER_HOST = dockerHost;
  else delete env.DOCKER_HOST;
  const { stdout } = await run(join(REPO, 'node_modules/.bin/tsx'), [join(REPO, 'test/helpers/remote-engine-run.ts'), label, LOCAL_SOCKET, remoteSocket], {
    cwd: REPO,
    env,
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as ProbeResult;
}

describe.skipIf(!canRunSecondEngine)(
  `a second Docker engine through DOCKER_HOST${canRunSecondEngine ? '' : skipNote || ' — SKIPPED: needs root and a local dockerd'}`,
  () => {
    let dir: string;
    let socket: string;
    let dockerd: ChildProcess | undefined;

    beforeAll(async () => {
      await buildSandboxImage();
      // Short paths: a unix socket's path is limited to 108 bytes.
      dir = await mkdtemp('/tmp/vera-d2-');
      socket = join(dir, 'docker.sock');
      dockerd = spawn(
        'dockerd',
        [
          '--bridge=none',
          '--iptables=false',
          '--ip6tables=false',
          '-H',
          `unix://${socket}`,
          '--data-root',
          join(dir, 'data'),
          '--exec-root',
          join(dir, 'exec'),
          '--pidfile',
          join(dir, 'docker.pid'),
        ],
        { stdio: 'ignore', detached: true },
      );
      for (let i = 0; i < 60; i++) {
        const up = await run('docker', ['-H', `unix://${socket}`, 'info'], { timeout: 5_000 }).then(
          () => true,
          () => false,
        );
        if (up) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      // No registry: the image goes over as a tarball, local engine → second engine.
      await run('bash', ['-o', 'pipefail', '-c', `docker save ${defaultSandboxImage()} | docker -H unix://${socket} load`], { timeout: 120_000 });
    }, 240_000);

    afterAll(async () => {
      if (dockerd?.pid) {
        try {
          process.kill(dockerd.pid, 'SIGTERM');
        } catch {
          // already gone
        }
        await new Promise<void>((resolve) => {
          if (dockerd!.exitCode !== null) return resolve();
          const timer = setTimeout(() => {
            try {
              process.kill(dockerd!.pid!, 'SIGKILL');
            } catch {
              // gone
            }
            resolve();
          }, 20_000);
          dockerd!.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      // dockerd leaves its default network namespace mounted under the exec root.
      if (dir) {
        await run('umount', [join(dir, 'exec/netns/default')]).catch(() => undefined);
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      }
    }, 60_000);

    it('a case runs in a container on the engine DOCKER_HOST names, never on the local one, and leaves none', async () => {
      const result = await probe(`remote-${process.pid}`, socket, `unix://${socket}`);
      expect(result).toMatchObject({ status: 'safe', seen: { local: 0, remote: 1 }, wrote: '- engine test\n', after: { local: 0, remote: 0 } });
    }, 180_000);

    it('without DOCKER_HOST the same run lands on the local engine (the count tells the engines apart)', async () => {
      const result = await probe(`local-${process.pid}`, socket, undefined);
      expect(result).toMatchObject({ status: 'safe', seen: { local: 1, remote: 0 }, after: { local: 0, remote: 0 } });
    }, 180_000);
  },
);
