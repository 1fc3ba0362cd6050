import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { LISTEN_MARKER_DIR, RELAY_ARG, SANDBOX_PROTOCOL, SERVER_SCRIPT } from './protocol.js';
import { bridge, StreamChannel } from './stream-channel.js';
import { type ControlMessage, StreamChannelError } from './stream-frames.js';

/**
 * The host half of the exec-stream channel (the relay is stream-relay.ts): one long-lived
 * `docker exec -i <container> node sandbox-server.mjs relay` whose stdin/stdout carry the frames.
 *
 * - `baseUrl` is a listener on an ephemeral 127.0.0.1 port of the host; each connection to it
 *   becomes a stream the relay connects to the sandbox server, so the admin client is unchanged.
 * - `allow(id, ports)` asks the relay to listen on those ports inside the container; a stream the
 *   relay opens is connected to the same port on the host's loopback — only if some `allow` named
 *   it (a process in the container could forge frames on the relay's stdout: the host decides).
 *
 * Through the Docker API only, so it works with an engine on another machine and a container
 * whose network mode is `none`.
 */
export interface ExecStreamLinkOptions {
  docker: string;
  containerId: string;
  /** How long the relay may take to say hello. */
  timeoutMs: number;
}

export class ExecStreamLink {
  private readonly allowed = new Set<number>();
  private readonly sockets = new Set<Socket>();
  private closing = false;

  private constructor(
    private readonly relay: ChildProcess,
    private readonly channel: StreamChannel,
    private readonly listener: Server,
    /** The relay's PID inside the container (a reset must spare it). */
    readonly relayPid: number,
    /** The relay's last stderr lines (shared with the reader started before the link existed). */
    private readonly stderrTail: string[],
  ) {}

  static async start(options: ExecStreamLinkOptions): Promise<ExecStreamLink> {
    const relay = spawn(options.docker, ['exec', '-i', options.containerId, '/usr/local/bin/node', SERVER_SCRIPT, RELAY_ARG], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // A broken pipe is reported once through the channel ('close'); later errors must not throw.
    relay.stdin!.on('error', () => {});
    relay.stdout!.on('error', () => {});
    const stderrTail: string[] = [];
    relay.stderr!.on('data', (chunk: Buffer) => {
      for (const line of String(chunk).split('\n')) if (line.trim()) stderrTail.push(line.trim());
      if (stderrTail.length > 20) stderrTail.splice(0, stderrTail.length - 20);
    });
    let onHello: (message: ControlMessage) => void = () => {};
    let link: ExecStreamLink | undefined;
    const channel = new StreamChannel(relay.stdout!, relay.stdin!, {
      side: 'host',
      onOpen: (target, stream) => {
        if (!link || target.to !== 'port' || !link.allowed.has(target.port)) {
          stream.destroy(new Error(`the host does not relay ${target.to === 'port' ? `port ${target.port}` : 'that target'}`));
          return;
        }
        bridge(connect({ port: target.port, host: '127.0.0.1', allowHalfOpen: true }), stream);
      },
      onControl: (message) => onHello(message),
    });
    const failed = (why: string) =>
      new StreamChannelError(`the exec-stream relay in container ${options.containerId.slice(0, 12)} did not start: ${why}${tail(stderrTail)}`);
    let hello: { pid: number };
    try {
      hello = await new Promise<{ pid: number }>((resolve, reject) => {
        const timer = setTimeout(() => reject(failed(`no hello within ${options.timeoutMs} ms`)), options.timeoutMs);
        onHello = (message) => {
          if (message.type !== 'hello') return;
          clearTimeout(timer);
          if (message.protocol !== SANDBOX_PROTOCOL) reject(failed(`it speaks protocol ${message.protocol}, this vera-safety ${SANDBOX_PROTOCOL}`));
          else resolve({ pid: message.pid });
        };
        relay.once('error', (error) => {
          clearTimeout(timer);
          reject(failed(`${options.docker} exec could not run (${error.message})`));
        });
        // The stderr tail arrives a moment before or after the exit; wait for the close of all stdio.
        relay.once('close', (code, signal) => {
          clearTimeout(timer);
          reject(failed(`docker exec ended (${signal ?? `exit code ${code}`})`));
        });
      });
    } catch (error) {
      channel.close(error as Error);
      relay.kill('SIGKILL');
      throw error;
    }
    const listener = createServer({ allowHalfOpen: true });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', () => resolve());
    });
    link = new ExecStreamLink(relay, channel, listener, hello.pid, stderrTail);
    onHello = (message) => link!.onControl(message);
    listener.on('connection', (socket) => link!.accept(socket));
    // The relay ended (the container died or was removed, docker exec broke): nothing more crosses.
    relay.once('close', () => channel.close(new StreamChannelError(`the exec-stream relay ended${tail(stderrTail)}`)));
    void channel.closed.then(() => {
      listener.close();
      for (const socket of link!.sockets) socket.destroy();
    });
    return link;
  }

  /** `http://127.0.0.1:<port>`: the admin API as the host reaches it. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.listener.address() as AddressInfo).port}`;
  }

  get alive(): boolean {
    return !this.channel.isClosed;
  }

  /** Why the channel ended, once it did. */
  get ended(): Promise<Error> {
    return this.channel.closed;
  }

  /** Host → container: a connection to the listener is a stream the relay connects to the sandbox server. */
  private accept(socket: Socket): void {
    if (this.channel.isClosed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    bridge(socket, this.channel.open({ to: 'admin' }));
  }

  private onControl(message: ControlMessage): void {
    // A port the relay could not take (something in the container listens there): the program
    // fails with it on its stderr; kept here too, for the error that may follow.
    if (message.type === 'listening' && message.error) this.stderrTail.push(`listen ${message.id}: ${message.error}`);
  }

  /**
   * Container → host for `ports`: from now on the relay may connect them to this host's loopback,
   * and it listens on each inside the container, then writes the marker `waitLine(id)` waits for. Returns
   * at once: spawn() is synchronous, and its shell line waits for the marker.
   */
  allow(id: string, ports: readonly number[]): void {
    for (const port of ports) this.allowed.add(port);
    this.channel.control({ type: 'listen', id, ports: [...new Set(ports)] });
  }

  /** A pooled container's reset: the next case has other ports; none stay reachable. */
  revoke(): void {
    this.allowed.clear();
    this.channel.control({ type: 'unlisten' });
  }

  /**
   * The start of a spawned program's `sh -c` line: waits (at most ~10 s) for the marker of
   * `allow(id, …)`, and fails the program (exit 125, the reason on stderr) when the relay could
   * not listen — so the program never starts before its endpoints are reachable.
   */
  static waitLine(id: string): string {
    const marker = `${LISTEN_MARKER_DIR}/${id}`;
    return (
      `n=0; until [ -s ${marker} ]; do n=$((n+1)); ` +
      `[ "$n" -le 200 ] || { echo "vera: the exec-stream relay did not listen within 10 s" >&2; exit 125; }; sleep 0.05; done; ` +
      `read -r s < ${marker}; [ "$s" = ok ] || { echo "vera: $s" >&2; exit 125; }; `
    );
  }

  /** The relay's last stderr lines, for error messages. */
  get relayLog(): string {
    return tail(this.stderrTail);
  }

  /** Ends the relay (its stdin closes, it exits), then docker exec; idempotent. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.channel.close(new StreamChannelError('the exec-stream channel was closed by the host'));
    this.relay.stdin?.end();
    if (this.relay.exitCode === null && this.relay.signalCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.relay.kill('SIGKILL');
          resolve();
        }, 2_000);
        timer.unref();
        this.relay.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The host PID of the `docker exec` client (for tests: it must be gone after close). */
  get execPid(): number | undefined {
    return this.relay.pid;
  }
}

function tail(lines: readonly string[]): string {
  return lines.length ? `; relay stderr: ${lines.slice(-5).join(' | ')}` : '';
}
