import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * A TCP listener on 127.0.0.1 that counts connections (and drops them), started before and
 * stopped after the enclosing describe: proof that something did — or did not — reach the network.
 */
export function countingListener(): { readonly port: number; readonly connections: number } {
  let server: Server;
  const state = { port: 0, connections: 0 };
  beforeAll(async () => {
    server = createServer((socket) => {
      state.connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    state.port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}

/** An HTTP listener on 127.0.0.1 that answers 200 and keeps `METHOD path body` of each request that reached it. */
export function httpCollector(): { readonly port: number; readonly received: string[] } {
  let server: HttpServer;
  const state = { port: 0, received: [] as string[] };
  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        state.received.push(`${req.method} ${req.url} ${body}`);
        res.end('received\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    state.port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}
