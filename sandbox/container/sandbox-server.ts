import { timingSafeEqual } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readJsonBody, sendJson } from '../http-json.js';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { VeraError } from '../../engine/errors.js';
import { InProcessBackend } from '../backends/in-process-backend.js';
import type { AnyEnvironmentDefinition } from '../environment.js';
import { InitScriptError, type StartedSandbox } from '../sandbox.js';
import { ExecWatch } from './exec-watch.js';
import { killOtherProcesses } from './process-tree.js';
import {
  applyRequest,
  callRequest,
  claimRequest,
  EXEC_PID_DIR,
  execKillRequest,
  resetRequest,
  ROUTES,
  SANDBOX_PROTOCOL,
  startRequest,
  type ErrorResponse,
} from './protocol.js';

/**
 * The sandbox server: runs inside the container and hosts one case's environments at a time —
 * the same definitions and the same in-process sandbox the in-process backend uses, so a tool
 * behaves identically in both backends — behind the admin API of `protocol.ts`. The recording
 * gateway stays on the host (see docs/architecture.md, "Container sandbox").
 */
export interface SandboxServerOptions {
  /** Bearer token every request must carry; without one, the first `POST /v1/claim` sets it. */
  token?: string;
  /** 0: let the kernel pick (the port is reported by `listen()`). */
  port?: number;
  /** Listen on this unix socket instead of a TCP port (the exec-stream channel). */
  socket?: string;
  /** Parent directory of run workspaces (default `/workspace`). */
  workspaceRoot?: string;
  /** Environments replacing or adding to the built-in ones, by name. */
  environments?: Record<string, AnyEnvironmentDefinition>;
  /** True only inside the sandbox container: reset may then kill every other process in it. */
  ownsProcessNamespace?: boolean;
  /** Directories whose contents reset removes (the container's /tmp and HOME). */
  scratchDirs?: string[];
}

/** A refusal the server answers as HTTP `status` with `body`; the admin client raises it again as a SandboxServerError. */
class HttpError extends VeraError {
  constructor(
    readonly status: number,
    readonly body: ErrorResponse,
  ) {
    super('SANDBOX_REFUSED', body.error.message);
    this.name = 'HttpError';
  }
}

function badRequest(route: string, error: z.ZodError): HttpError {
  const detail = error.issues.map((i) => `${['body', ...i.path].join('.')}: ${i.message}`).join('; ');
  return new HttpError(400, { error: { kind: 'BadRequest', message: `${route}: ${detail}` } });
}

export class SandboxServer {
  private readonly http: Server;
  private readonly backend: InProcessBackend;
  private sandbox: StartedSandbox | undefined;
  /** Serialises start/reset so a reset never races a start. */
  private lifecycle: Promise<unknown> = Promise.resolve();
  private token: Buffer | undefined;
  /** The trees of the programs `spawn()` started, so a crashed one's orphans can still be ended. */
  private readonly execs = new ExecWatch();

  constructor(private readonly options: SandboxServerOptions) {
    if (options.token) this.token = Buffer.from(options.token);
    this.backend = new InProcessBackend({
      tmpRoot: options.workspaceRoot ?? '/workspace',
      ...(options.environments ? { environments: options.environments } : {}),
    });
    this.http = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => {
        const http = error instanceof HttpError ? error : new HttpError(500, { error: { kind: 'InternalError', message: (error as Error).message } });
        send(res, http.status, http.body);
      });
    });
  }

  /** Listens on 127.0.0.1 and returns the port — or on the unix socket of `socket`, and returns 0. */
  async listen(): Promise<number> {
    await mkdir(this.options.workspaceRoot ?? '/workspace', { recursive: true });
    const socket = this.options.socket;
    if (socket) {
      await mkdir(dirname(socket), { recursive: true });
      await rm(socket, { force: true });
    }
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      if (socket) this.http.listen(socket, () => resolve());
      else this.http.listen(this.options.port ?? 0, '127.0.0.1', () => resolve());
    });
    return socket ? 0 : (this.http.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.execs.close();
    await this.sandbox?.stop().catch(() => {});
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private authorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    return this.token !== undefined && given.length === this.token.length && timingSafeEqual(given, this.token);
  }

  private started(): StartedSandbox {
    if (!this.sandbox) throw new HttpError(409, { error: { kind: 'NotStarted', message: 'no sandbox is started (POST /v1/start first)' } });
    return this.sandbox;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    if (route === `POST ${ROUTES.claim}`) {
      const body = claimRequest.safeParse(await readJson(req).catch(() => undefined));
      if (!body.success) throw badRequest(route, body.error);
      if (this.token) throw new HttpError(409, { error: { kind: 'AlreadyClaimed', message: 'this sandbox server was claimed already' } });
      this.token = Buffer.from(body.data.token);
      return send(res, 200, { protocol: SANDBOX_PROTOCOL, started: false });
    }
    if (!this.authorized(req)) throw new HttpError(401, { error: { kind: 'Unauthorized', message: 'missing or wrong bearer token' } });
    const parse = async <S extends z.ZodType>(schema: S): Promise<z.output<S>> => {
      let body: unknown;
      try {
        body = await readJson(req);
      } catch (error) {
        throw new HttpError(400, { error: { kind: 'BadRequest', message: `${route}: body is not JSON: ${(error as Error).message}` } });
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success) throw badRequest(route, parsed.error);
      return parsed.data;
    };

    switch (route) {
      case `GET ${ROUTES.health}`:
        return send(res, 200, { protocol: SANDBOX_PROTOCOL, started: this.sandbox !== undefined });
      case `POST ${ROUTES.start}`: {
        const body = await parse(startRequest);
        const sandbox = await this.serially(async () => {
          if (this.sandbox)
            throw new HttpError(409, { error: { kind: 'AlreadyStarted', message: 'a sandbox is already started in this container (POST /v1/reset first)' } });
          try {
            this.sandbox = await this.backend.start({ environments: body.environments, ...(body.label ? { label: body.label } : {}) });
          } catch (error) {
            throw new HttpError(400, { error: { kind: 'StartError', message: (error as Error).message } });
          }
          return this.sandbox;
        });
        return send(res, 200, { workspace: sandbox.workspace, tools: sandbox.tools() });
      }
      case `POST ${ROUTES.apply}`: {
        const body = await parse(applyRequest);
        try {
          await this.started().apply(body.step, body.index);
        } catch (error) {
          if (!(error instanceof InitScriptError)) throw error;
          const prefix = `init[${error.step}] ${error.op}: `;
          const detail = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
          throw new HttpError(422, { error: { kind: 'InitScriptError', message: error.message, step: error.step, op: error.op, detail } });
        }
        return send(res, 200, {});
      }
      case `GET ${ROUTES.tools}`:
        return send(res, 200, { tools: this.started().tools() });
      case `POST ${ROUTES.call}`: {
        const body = await parse(callRequest);
        return send(res, 200, await this.started().callTool(body.name, body.args));
      }
      case `GET ${ROUTES.snapshot}`:
        return send(res, 200, { snapshot: await this.started().snapshot() });
      case `POST ${ROUTES.reset}`: {
        const body = await parse(resetRequest);
        const killed = await this.serially(() => this.reset(body.keep));
        return send(res, 200, { killed });
      }
      case `POST ${ROUTES.execKill}`: {
        const body = await parse(execKillRequest);
        return send(res, 200, { killed: await this.execs.kill(body.id) });
      }
      default:
        throw new HttpError(404, { error: { kind: 'NotFound', message: `no route ${route}` } });
    }
  }

  /** Ends the current sandbox: stray processes, environments, workspace. The container is ready for the next case. */
  private async reset(keep: readonly number[] = []): Promise<number> {
    const killed = this.options.ownsProcessNamespace ? await killOtherProcesses(keep) : 0;
    const sandbox = this.sandbox;
    this.sandbox = undefined;
    await sandbox?.stop();
    await rm(EXEC_PID_DIR, { recursive: true, force: true }).catch(() => {});
    this.execs.clear();
    for (const dir of this.options.scratchDirs ?? []) {
      for (const name of await readdir(dir).catch(() => [] as string[])) await rm(`${dir}/${name}`, { recursive: true, force: true }).catch(() => {});
    }
    return killed;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.lifecycle.then(work, work);
    this.lifecycle = next.catch(() => {});
    return next;
  }
}

const send = sendJson;

function readJson(req: IncomingMessage): Promise<unknown> {
  return readJsonBody(req, 64 * 1024 * 1024, {});
}
