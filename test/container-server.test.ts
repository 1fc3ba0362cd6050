/**
 * The sandbox server's admin API (what runs inside the container), served here on the host in
 * this process: claiming, authentication, validated bodies with clear errors, init errors, reset.
 * Needs no Docker; the container tests cover the same server inside the image.
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InitScriptError } from '../sandbox/sandbox.js';
import { SandboxAdminClient } from '../sandbox/container/admin-client.js';
import { healthResponse, killedResponse, ROUTES, SANDBOX_PROTOCOL, snapshotResponse, startResponse, toolOutcome } from '../sandbox/container/protocol.js';
import { SandboxServer } from '../sandbox/container/sandbox-server.js';
import { z } from 'zod';

const TOKEN = 'a'.repeat(48);
let server: SandboxServer;
let base: string;
let root: string;

const client = (token = TOKEN) =>
  new SandboxAdminClient({
    baseUrl: base,
    token,
    timeoutMs: 10_000,
    onUnreachable: async (route, cause) => new Error(`unreachable ${route}: ${cause.message}`),
  });

async function raw(method: string, path: string, body?: string, token?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${path}`, { method, ...(body !== undefined ? { body } : {}), headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, json: await res.json() };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'vera-sandbox-server-'));
  // Not in a container: reset must never kill this machine's processes.
  server = new SandboxServer({ workspaceRoot: root, ownsProcessNamespace: false });
  base = `http://127.0.0.1:${await server.listen()}`;
});
afterAll(() => server?.close());

describe('sandbox server admin API', () => {
  it('refuses everything before it is claimed, is claimed once, then wants the token', async () => {
    expect(await raw('GET', ROUTES.health)).toMatchObject({ status: 401, json: { error: { kind: 'Unauthorized' } } });
    expect(await raw('POST', ROUTES.claim, JSON.stringify({ token: 'short' }))).toMatchObject({
      status: 400,
      json: { error: { kind: 'BadRequest', message: expect.stringMatching(/^POST \/v1\/claim: body\.token: /) } },
    });
    expect(await client().request('POST', ROUTES.claim, { token: TOKEN }, healthResponse)).toEqual({ protocol: SANDBOX_PROTOCOL, started: false });
    await expect(client().request('POST', ROUTES.claim, { token: 'b'.repeat(48) }, healthResponse)).rejects.toMatchObject({
      kind: 'AlreadyClaimed',
      status: 409,
    });
    await expect(client('c'.repeat(48)).request('GET', ROUTES.health, undefined, healthResponse)).rejects.toMatchObject({ kind: 'Unauthorized', status: 401 });
    expect(await client().request('GET', ROUTES.health, undefined, healthResponse)).toEqual({ protocol: SANDBOX_PROTOCOL, started: false });
  });

  it('validates bodies and names the field', async () => {
    await expect(client().request('POST', ROUTES.start, { environments: [] }, startResponse)).rejects.toThrow(
      /^POST \/v1\/start: body\.environments: Too small/,
    );
    await expect(client().request('POST', ROUTES.call, { name: 'read_file', args: {}, extra: 1 }, toolOutcome)).rejects.toThrow(
      /^POST \/v1\/call: body: Unrecognized key: "extra"/,
    );
    expect(await raw('POST', ROUTES.call, '{not json', TOKEN)).toMatchObject({
      status: 400,
      json: { error: { message: expect.stringContaining('body is not JSON') } },
    });
    expect(await raw('GET', '/v1/nowhere', undefined, TOKEN)).toMatchObject({
      status: 404,
      json: { error: { kind: 'NotFound', message: 'no route GET /v1/nowhere' } },
    });
  });

  it('tool calls before start are refused clearly; an unknown environment lists the known ones', async () => {
    await expect(client().request('POST', ROUTES.call, { name: 'read_file', args: {} }, toolOutcome)).rejects.toMatchObject({
      kind: 'NotStarted',
      message: 'no sandbox is started (POST /v1/start first)',
    });
    await expect(client().request('POST', ROUTES.start, { environments: ['nope'] }, startResponse)).rejects.toThrow(
      /unknown environment "nope" \(known environments: .*files/,
    );
  });

  it('start → apply → call → snapshot → reset, with init errors as InitScriptError', async () => {
    const started = await client().request('POST', ROUTES.start, { environments: ['files'], label: 'api' }, startResponse);
    expect(started.workspace.slice(root.length + 1)).toMatch(/^vera-\d+-api-/);
    expect(started.tools.map((t) => t.name)).toContain('read_file');
    await expect(client().request('POST', ROUTES.start, { environments: ['files'] }, startResponse)).rejects.toMatchObject({
      kind: 'AlreadyStarted',
      status: 409,
    });

    await client().request('POST', ROUTES.apply, { step: { op: 'files.write', args: { path: '/a.txt', content: 'A' } }, index: 0 }, z.object({}));
    const failed = client().request('POST', ROUTES.apply, { step: { op: 'files.write', args: { path: 7 } }, index: 1 }, z.object({}));
    await expect(failed).rejects.toBeInstanceOf(InitScriptError);
    await expect(failed).rejects.toMatchObject({ step: 1, op: 'files.write', message: expect.stringMatching(/^init\[1\] files\.write: path: /) });

    expect(await client().request('POST', ROUTES.call, { name: 'read_file', args: { path: '/a.txt' } }, toolOutcome)).toMatchObject({
      isError: false,
      value: { content: 'A' },
    });
    expect(await client().request('POST', ROUTES.call, { name: 'read_file', args: { path: '../x' } }, toolOutcome)).toMatchObject({
      isError: true,
      error: 'path escapes the workspace: ../x',
    });
    expect((await client().request('GET', ROUTES.snapshot, undefined, snapshotResponse)).snapshot).toEqual({
      files: { files: { '/a.txt': { content: 'A', size: 1 } }, shares: [] },
    });

    expect(await client().request('POST', ROUTES.reset, {}, killedResponse)).toEqual({ killed: 0 });
    expect(existsSync(started.workspace)).toBe(false);
    expect(await client().request('GET', ROUTES.health, undefined, healthResponse)).toEqual({ protocol: SANDBOX_PROTOCOL, started: false });
  });

  it('a server that is gone is reported through onUnreachable, not as a protocol error', async () => {
    const gone = new SandboxAdminClient({
      baseUrl: 'http://127.0.0.1:9',
      token: TOKEN,
      timeoutMs: 5000,
      onUnreachable: async (route) => new Error(`gone at ${route}`),
    });
    await expect(gone.request('GET', ROUTES.health, undefined, healthResponse)).rejects.toThrow('gone at GET /v1/health');
  });
});
