/**
 * The container sandbox on a Docker engine that cannot reach this host's network — as an engine
 * on another machine cannot: a second dockerd started in a network namespace of its own
 * (`unshare --net`; its own data root, no bridge), reached by this host's docker CLI only through
 * its unix socket (`DOCKER_HOST=unix://…`, the Docker API, as `tcp://` or `ssh://` would be). Its
 * containers' loopback is not this host's 127.0.0.1. The sandbox image goes over with `docker
 * save | docker load`. Shown here:
 *
 * - the exec-stream channel (the default when DOCKER_HOST is set) runs a case there — verdict,
 *   tool call, snapshot — and a program spawned in the container reaches the host loopback port
 *   its `network` lists, and not another one;
 * - host networking against the same engine fails to start with "does not answer" (the old way
 *   cannot work there), and leaves no container on either engine;
 * - after each run neither engine holds a sandbox container and no relay client is left; a
 *   container killed mid-run fails that run with SANDBOX_FAILED, promptly;
 * - without DOCKER_HOST the run lands on the local engine (the counts tell the engines apart).
 *
 * Needs root (unshare, a second dockerd) and dockerd: CI has both.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readlinkSync } from 'node:fs';
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

interface Counts {
  local: number;
  remote: number;
  relays: number;
}
interface ProbeResult {
  network: string;
  status: string;
  error?: { code: string; message: string };
  seen: Counts;
  wrote: string | null;
  caseMs: number;
  failedAfterKillMs?: number;
  toolError?: string;
  spawned?: {
    listed: string;
    upload: string;
    unlisted: string;
    relaysDuring: number;
    next: { sameContainer: boolean; listed: string; revoked: string };
  };
  after: Counts;
}

async function probe(mode: 'case' | 'host' | 'kill', remoteSocket: string, dockerHost: string | undefined): Promise<ProbeResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, TESTCONTAINERS_RYUK_DISABLED: 'true' };
  if (dockerHost) env.DOCKER_HOST = dockerHost;
  else delete env.DOCKER_HOST;
  const { stdout } = await run(
    join(REPO, 'node_modules/.bin/tsx'),
    [join(REPO, 'test/helpers/remote-engine-run.ts'), mode, `${mode}-${dockerHost ? 'remote' : 'local'}-${process.pid}`, LOCAL_SOCKET, remoteSocket],
    { cwd: REPO, env, timeout: 150_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as ProbeResult;
}

/** What the host server answers to the 8 MiB upload: its size and sha256 prefix. */
const EIGHT_MIB = `${8 * 1024 * 1024}:${createHash('sha256')
  .update(Buffer.alloc(8 * 1024 * 1024, 7))
  .digest('hex')
  .slice(0, 16)}`;

/** The network namespace of a process, as the kernel names it (`net:[4026531840]`). */
function netns(pid: number | 'self'): string {
  return readlinkSync(`/proc/${pid}/ns/net`);
}

describe.skipIf(!canRunSecondEngine)(
  `a Docker engine in another network namespace, through DOCKER_HOST${canRunSecondEngine ? '' : skipNote || ' — SKIPPED: needs root and a local dockerd'}`,
  () => {
    let dir: string;
    let socket: string;
    let dockerd: ChildProcess | undefined;
    const docker2 = (...args: string[]) => run('docker', ['-H', `unix://${socket}`, ...args], { timeout: 30_000 });

    beforeAll(async () => {
      await buildSandboxImage();
      // Short paths: a unix socket's path is limited to 108 bytes.
      dir = await mkdtemp('/tmp/vera-d2-');
      socket = join(dir, 'docker.sock');
      const dockerdArgs = [
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
      ];
      // A network namespace of its own (util-linux's unshare; no fork, so the pid is dockerd's).
      // Its loopback is brought up where `ip` exists, as on a real machine; the test holds without.
      dockerd = spawn('unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up 2>/dev/null; exec dockerd "$@"', 'dockerd', ...dockerdArgs], {
        stdio: 'ignore',
        detached: true,
      });
      let up = false;
      for (let i = 0; i < 60 && !up; i++) {
        up = await docker2('info').then(
          () => true,
          () => false,
        );
        if (!up) await new Promise((r) => setTimeout(r, 500));
      }
      if (!up) throw new Error(`the second dockerd did not answer on ${socket}`);
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

    it('the second engine is in another network namespace, and so are its host-network containers', async () => {
      expect(netns(dockerd!.pid!)).not.toBe(netns('self'));
      // "Host" networking on that engine is the engine's namespace, not this host's.
      const { stdout } = await docker2('run', '-d', '--network', 'host', '--entrypoint', '/usr/bin/sleep', defaultSandboxImage(), '60');
      const id = stdout.trim();
      try {
        const pid = Number((await docker2('inspect', '--format', '{{.State.Pid}}', id)).stdout.trim());
        expect(netns(pid)).toBe(netns(dockerd!.pid!));
        expect(netns(pid)).not.toBe(netns('self'));
      } finally {
        await docker2('rm', '-f', id);
      }
    }, 60_000);

    it('exec-stream (the default with DOCKER_HOST): a case runs there, a spawned program reaches its listed host port and not another, also after a pool reset', async () => {
      const result = await probe('case', socket, `unix://${socket}`);
      expect(result).toMatchObject({
        network: 'exec-stream',
        status: 'safe',
        seen: { local: 0, remote: 1, relays: 1 },
        wrote: '- engine test\n',
        // The upload's bytes arrive whole (size and hash), through the relay's back-pressure.
        spawned: {
          listed: 'answer:<token>',
          upload: `answer:${EIGHT_MIB}`,
          unlisted: 'error:ECONNREFUSED',
          relaysDuring: 1,
          // A pool's reset spares the relay and revokes the first case's port.
          next: { sameContainer: true, listed: 'answer:second-server', revoked: 'error:ECONNREFUSED' },
        },
        after: { local: 0, remote: 0, relays: 0 },
      });
    }, 180_000);

    it('host networking against the same engine cannot work: the start fails with "does not answer", and no container is left', async () => {
      const result = await probe('host', socket, `unix://${socket}`);
      expect(result.network).toBe('host');
      expect(result.status).toBe('error');
      expect(result.error?.message).toMatch(
        /is running but its sandbox server does not answer \(noticed at POST \/v1\/claim: connect ECONNREFUSED 127\.0\.0\.1:\d+\)/,
      );
      // The agent never ran (seen stays -1), and neither engine keeps the container.
      expect(result.seen).toEqual({ local: -1, remote: -1, relays: -1 });
      expect(result.after).toEqual({ local: 0, remote: 0, relays: 0 });
    }, 180_000);

    it('a container killed mid-run fails that run with SANDBOX_FAILED, promptly; nothing is left on either engine', async () => {
      const result = await probe('kill', socket, `unix://${socket}`);
      expect(result).toMatchObject({
        network: 'exec-stream',
        status: 'error',
        seen: { local: 0, remote: 1, relays: 1 },
        after: { local: 0, remote: 0, relays: 0 },
      });
      expect(result.error?.code).toBe('SANDBOX_FAILED');
      expect(result.error?.message).toMatch(/sandbox container [0-9a-f]{12} \(vera-sandbox:[^)]+\) died: (it exited with code 137, killed|it was removed)/);
      // The tool call after the kill was an error result the agent saw, not a hang.
      expect(result.toolError).toMatch(/died/);
      expect(result.failedAfterKillMs).toBeLessThan(20_000);
    }, 180_000);

    it('without DOCKER_HOST the same run lands on the local engine, on the host channel (the count tells the engines apart)', async () => {
      const result = await probe('case', socket, undefined);
      expect(result).toMatchObject({
        network: 'host',
        status: 'safe',
        seen: { local: 1, remote: 0, relays: 0 },
        // Host networking confines nothing: the port no `network` list names is reached too.
        spawned: {
          listed: 'answer:<token>',
          upload: `answer:${EIGHT_MIB}`,
          unlisted: 'answer:second-server',
          relaysDuring: 0,
          next: { sameContainer: true, listed: 'answer:second-server', revoked: 'answer:<token>' },
        },
        after: { local: 0, remote: 0, relays: 0 },
      });
    }, 180_000);
  },
);
