/**
 * The container backend's two set-up failures, told apart: no Docker engine (start Docker) and
 * no sandbox image (build it with `npx vera sandbox-image`). The first needs no Docker at all;
 * the second needs an engine (skipped off CI without one, like the other container tests).
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerBackend } from '../sandbox/backends/container-backend.js';
import { dockerMissing, skipNote } from './helpers/container-prereqs.js';

describe('without a Docker engine', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vera-docker-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says the engine is missing (not the image) when the docker CLI is not installed', async () => {
    const backend = new ContainerBackend({ docker: join(dir, 'no-such-docker') });
    const error = await backend.start({ environments: ['files'] }).then(
      () => undefined,
      (e: Error) => e,
    );
    await backend.close();
    expect(error?.message).toMatch(/the container sandbox needs a Docker engine: the docker CLI \(.*no-such-docker\) is not installed/);
    expect(error?.message).toContain("sandbox: 'in-process'");
    expect(error?.message).not.toMatch(/image/);
  });

  it('says the engine is unreachable when the CLI cannot connect to a daemon', async () => {
    const fake = join(dir, 'docker');
    await writeFile(fake, '#!/bin/sh\necho "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2\nexit 1\n');
    await chmod(fake, 0o755);
    const backend = new ContainerBackend({ docker: fake });
    const error = await backend.start({ environments: ['files'] }).then(
      () => undefined,
      (e: Error) => e,
    );
    await backend.close();
    expect(error?.message).toMatch(/needs a Docker engine: no Docker engine is reachable \(Cannot connect to the Docker daemon/);
    expect(error?.message).not.toMatch(/image/);
  });
});

describe.skipIf(dockerMissing && !process.env.CI)(`with a Docker engine but no image${skipNote}`, () => {
  it('says the image is missing and how to build it', async () => {
    const backend = new ContainerBackend({ image: 'vera-sandbox:no-such-version' });
    const error = await backend.start({ environments: ['files'] }).then(
      () => undefined,
      (e: Error) => e,
    );
    await backend.close();
    expect(error?.message).toMatch(/sandbox image vera-sandbox:no-such-version is not available: build it with `npx vera sandbox-image`/);
    expect(error?.message).not.toMatch(/needs a Docker engine/);
  });
});
