import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readJsonBody, sendJson } from '../http-json.js';
import { sharedSchemaValidator } from './schema-validator.js';
import type { ToolGateway } from './tool-gateway.js';

/** A gateway reachable over MCP streamable HTTP; `stop()` is idempotent. */
export interface StartedMcpGateway extends AsyncDisposable {
  /** The MCP endpoint URL an agent connects to (http://127.0.0.1:<port>/mcp/<token>). */
  readonly url: string;
  /** Name agents see for this server (`vera`), e.g. as `mcp__vera__send_email`. */
  readonly serverName: string;
  stop(): Promise<void>;
}

interface Mount {
  gateway: ToolGateway;
  sessions: Map<string, StreamableHTTPServerTransport>;
}

const SERVER_NAME = 'vera';

/**
 * One loopback HTTP server per process serves every run's gateway, each under its own
 * unguessable path; it listens while at least one gateway is mounted. One listener instead of
 * one per run keeps the per-case cost to a map insert.
 */
class McpHttpHost {
  private server: HttpServer | undefined;
  private listening: Promise<number> | undefined;
  private readonly mounts = new Map<string, Mount>();

  async mount(gateway: ToolGateway): Promise<StartedMcpGateway> {
    const token = randomBytes(12).toString('hex');
    const mount: Mount = { gateway, sessions: new Map() };
    this.mounts.set(token, mount);
    let port: number;
    try {
      port = await this.ensureListening();
    } catch (error) {
      this.mounts.delete(token);
      throw error;
    }
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        this.mounts.delete(token);
        await Promise.allSettled([...mount.sessions.values()].map((t) => t.close()));
        mount.sessions.clear();
        if (this.mounts.size === 0) this.closeWhenIdle();
      })());
    return { url: `http://127.0.0.1:${port}/mcp/${token}`, serverName: SERVER_NAME, stop, [Symbol.asyncDispose]: stop };
  }

  private ensureListening(): Promise<number> {
    if (this.listening) return this.listening;
    const server = createServer((req, res) => {
      this.route(req, res).catch((error: Error) => {
        if (!res.headersSent) reply(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: error.message }, id: null });
        else res.end();
      });
    });
    server.keepAliveTimeout = 30_000;
    this.server = server;
    this.listening = new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.unref();
        resolve((server.address() as AddressInfo).port);
      });
    });
    return this.listening;
  }

  private idleTimer: NodeJS.Timeout | undefined;

  /**
   * Stops listening once no gateway has been mounted for a moment: between runs that follow each
   * other the listener stays, instead of closing and listening again for every case.
   */
  private closeWhenIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.mounts.size === 0) void this.close();
    }, 1000);
    this.idleTimer.unref();
  }

  private async close(): Promise<void> {
    const server = this.server;
    const listening = this.listening;
    this.server = undefined;
    this.listening = undefined;
    if (!server) return;
    await listening?.catch(() => {});
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = /^\/mcp\/([0-9a-f]+)\/?(?:\?.*)?$/.exec(req.url ?? '');
    const mount = match ? this.mounts.get(match[1]!) : undefined;
    if (!mount) return reply(res, 404, { error: 'no gateway at this path (the run may have ended)' });

    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? mount.sessions.get(sessionId) : undefined;
    if (req.method !== 'POST') {
      if (!existing) return reply(res, 400, jsonRpcError('unknown or missing mcp-session-id'));
      return existing.handleRequest(req, res);
    }
    const body = await readJson(req);
    if (existing) return existing.handleRequest(req, res, body);
    if (sessionId !== undefined) return reply(res, 404, jsonRpcError('session not found'));
    if (!isInitializeRequest(body)) return reply(res, 400, jsonRpcError('the first request of a session must be initialize'));

    // Loaded when the first agent connects over HTTP: in-process agents use the in-memory pair.
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        mount.sessions.set(id, transport);
      },
      onsessionclosed: (id) => {
        mount.sessions.delete(id);
      },
    });
    await createMcpServer(mount.gateway).connect(transport);
    await transport.handleRequest(req, res, body);
  }
}

function createMcpServer(gateway: ToolGateway): Server {
  const server = new Server(
    { name: SERVER_NAME, version: '0.1.0' },
    { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: sharedSchemaValidator },
  );
  // A rug pull changes the list mid-session: say so (clients that keep a stream open hear it).
  const unsubscribe = gateway.onToolsChanged(() => {
    server.sendToolListChanged().catch(() => {});
  });
  server.onclose = () => unsubscribe();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: gateway.tools().map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as { type: 'object' } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const reply = await gateway.call(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>);
    return { content: [{ type: 'text', text: reply.text }], isError: reply.isError };
  });
  return server;
}

function jsonRpcError(message: string) {
  return { jsonrpc: '2.0', error: { code: -32000, message }, id: null };
}

const reply = sendJson;

function readJson(req: IncomingMessage): Promise<unknown> {
  return readJsonBody(req, 16 * 1024 * 1024, undefined);
}

const host = new McpHttpHost();

/**
 * The same MCP server over an in-memory transport pair, for agents that live in this process:
 * the protocol, the tool list and the recording are identical, without the HTTP hop. Returns
 * the client's end.
 */
export async function connectInMemory(gateway: ToolGateway): Promise<Transport> {
  const [client, server] = InMemoryTransport.createLinkedPair();
  await createMcpServer(gateway).connect(server);
  return client;
}

/** Serves `gateway` over MCP streamable HTTP on 127.0.0.1. */
export function startMcpGateway(gateway: ToolGateway): Promise<StartedMcpGateway> {
  return host.mount(gateway);
}
