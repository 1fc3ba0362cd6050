import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scratchPrefix, trackScratch, untrackScratch } from '../backends/scratch-dirs.js';

/**
 * The host half of a confined program's network: a confined program has no network of its own
 * (a fresh network namespace: only its own loopback), and reaches exactly the host loopback
 * ports the run allows — the gateway, the model endpoint or the run-wide model proxy — through
 * one unix socket per port in a directory bound into its sandbox. Inside, a small forwarder
 * (see `bubblewrap-program.ts`) listens on 127.0.0.1:<port> and relays to `<dir>/<port>.sock`;
 * here each socket relays to 127.0.0.1:<port>. Any other port, any other host: unreachable.
 */
export class LoopbackBridge {
  /** Short on purpose: a unix socket path has ~100 bytes at most. */
  readonly dir: string;
  private readonly servers = new Map<number, Server>();
  private readonly sockets = new Set<Socket>();
  private closed = false;

  constructor(parent = tmpdir()) {
    this.dir = mkdtempSync(join(parent, scratchPrefix('bridge')));
    trackScratch(this.dir);
  }

  /** Makes `port` reachable from inside; the socket exists when this returns (bind is synchronous for paths). */
  allow(port: number): void {
    if (this.closed) throw new Error('the loopback bridge is closed');
    if (this.servers.has(port)) return;
    const server = createServer((inner) => {
      this.sockets.add(inner);
      const outer = connect(port, '127.0.0.1');
      this.sockets.add(outer);
      const drop = () => {
        inner.destroy();
        outer.destroy();
        this.sockets.delete(inner);
        this.sockets.delete(outer);
      };
      inner.on('error', drop).on('close', drop);
      outer.on('error', drop).on('close', drop);
      inner.pipe(outer);
      outer.pipe(inner);
    });
    server.listen(join(this.dir, `${port}.sock`));
    server.unref();
    this.servers.set(port, server);
  }

  /**
   * Makes `port` reachable from inside, served here by `onConnection` instead of a host port (the
   * recording egress proxy): nothing on the host listens on it.
   */
  serve(port: number, onConnection: (socket: Socket) => void): void {
    if (this.closed) throw new Error('the loopback bridge is closed');
    if (this.servers.has(port)) throw new Error(`port ${port} is already bridged`);
    const server = createServer((inner) => {
      this.sockets.add(inner);
      inner.once('close', () => this.sockets.delete(inner));
      onConnection(inner);
    });
    server.listen(join(this.dir, `${port}.sock`));
    server.unref();
    this.servers.set(port, server);
  }

  get ports(): number[] {
    return [...this.servers.keys()];
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    for (const server of this.servers.values()) server.close();
    rmSync(this.dir, { recursive: true, force: true });
    untrackScratch(this.dir);
  }
}

/** The loopback port of `url` (`http://127.0.0.1:8080/v1` → 8080), or undefined for any other host. */
export function loopbackPort(url: string): number | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(parsed.hostname)) return undefined;
  if (parsed.port) return Number(parsed.port);
  return parsed.protocol === 'https:' ? 443 : 80;
}
