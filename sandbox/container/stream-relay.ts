import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { ADMIN_SOCKET, LISTEN_MARKER_DIR, SANDBOX_PROTOCOL, SERVER_ENV } from './protocol.js';
import { bridge, StreamChannel } from './stream-channel.js';

/**
 * The container half of the exec-stream channel: `docker exec -i <container> node
 * /opt/vera/sandbox-server.mjs relay`, started by the host once per container. Its stdin and
 * stdout carry the frames of stream-channel.ts, so the host needs nothing but the Docker API to
 * reach the container (an engine on another machine, a container with network mode `none`):
 *
 * - a stream the host opens (`{ to: 'admin' }`) is connected to the sandbox server's unix socket;
 * - on `listen`, the relay listens on 127.0.0.1:<port> inside the container for each port and
 *   opens a stream (`{ to: 'port', port }`) per connection, which the host connects to the same
 *   port on its own loopback (the gateway, the model endpoint) — if it allowed that port;
 * - it then writes LISTEN_MARKER_DIR/<id>: the `spawn()`ed program's shell line waits for it, so
 *   the program starts only once its endpoints are reachable.
 *
 * Nothing but frames may reach stdout (diagnostics go to stderr). stdout is `process.stdout`, a
 * libuv pipe: writes that the pipe cannot take now are queued and `write()` returns false (the
 * channel then holds its senders until 'drain'). Not an fs stream on fd 1: under an 8 MiB upload
 * from the container its writes failed ("A system error occurred: undefined returned undefined",
 * no errno) and the relay ended; test/container-remote-engine.test.ts's upload catches that.
 */
export interface RelayOptions {
  input: Readable;
  output: Writable;
  adminSocket: string;
  markerDir: string;
  /** Where the relay listens for the ports the host names (default 127.0.0.1). */
  listenHost?: string;
  log?: (line: string) => void;
}

export function startRelay(options: RelayOptions): StreamChannel {
  const log = options.log ?? (() => {});
  const listeners = new Map<number, Server>();
  const channel: StreamChannel = new StreamChannel(options.input, options.output, {
    side: 'relay',
    onOpen(target, stream) {
      // The host opens streams to the admin API only; ports are the other direction.
      if (target.to !== 'admin') {
        stream.destroy(new Error('the relay connects host streams to the sandbox server only'));
        return;
      }
      bridge(connect({ path: options.adminSocket, allowHalfOpen: true }), stream);
    },
    onControl(message) {
      if (message.type === 'listen') void listen(message.id, message.ports);
      else if (message.type === 'unlisten') unlisten();
    },
  });

  async function listenOn(port: number): Promise<void> {
    if (listeners.has(port)) return;
    const server = createServer({ allowHalfOpen: true }, (socket) => bridge(socket, channel.open({ to: 'port', port })));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, options.listenHost ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => log(`vera-relay: listener ${port}: ${error.message}`));
    listeners.set(port, server);
  }

  async function listen(id: string, ports: number[]): Promise<void> {
    let error: string | undefined;
    for (const port of ports) {
      try {
        await listenOn(port);
      } catch (e) {
        // Something in the container took the port first: the program must not start talking to it.
        error = `the relay cannot listen on 127.0.0.1:${port} in the container: ${(e as Error).message}`;
        break;
      }
    }
    try {
      await mkdir(options.markerDir, { recursive: true });
      // Written whole, then renamed: the waiting shell never reads half a marker.
      const marker = `${options.markerDir}/${id}`;
      await writeFile(`${marker}.tmp`, error ? `error: ${error}\n` : 'ok\n');
      await rename(`${marker}.tmp`, marker);
    } catch (e) {
      error ??= `the relay could not write its marker: ${(e as Error).message}`;
    }
    channel.control({ type: 'listening', id, ...(error ? { error } : {}) });
  }

  function unlisten(): void {
    for (const server of listeners.values()) server.close();
    listeners.clear();
    void rm(options.markerDir, { recursive: true, force: true }).catch(() => {});
  }

  void channel.closed.then((reason) => {
    log(`vera-relay: ${reason.message}`);
    unlisten();
  });
  channel.control({ type: 'hello', protocol: SANDBOX_PROTOCOL, pid: process.pid });
  return channel;
}

/** `node sandbox-server.mjs relay`: runs until the host closes stdin (or the channel breaks). */
export async function relayMain(): Promise<never> {
  const channel = startRelay({
    input: process.stdin,
    output: process.stdout,
    adminSocket: process.env[SERVER_ENV.socket] ?? ADMIN_SOCKET,
    markerDir: LISTEN_MARKER_DIR,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await channel.closed;
  process.exit(0);
}
