import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { NewEvent } from '../../engine/trajectory.js';
import { requestEgressContent } from '../environments/shared/egress.js';
import { loopbackPort } from './loopback-bridge.js';

/**
 * The recording egress proxy of a confined program's sandbox. The program has no network of its
 * own; its HTTP(S)_PROXY variables point here (through the loopback bridge), so every request a
 * proxy-aware client makes — curl or wget in its shell, Python's requests, its own web-fetch tool —
 * arrives here first and is reported as a `NetworkAttempt`, whatever becomes of it:
 *
 * - to one of the run's own loopback endpoints (the gateway, the model endpoint): relayed, not
 *   reported — that traffic is the run itself;
 * - to a destination the user allowed (`allow`): relayed, and reported as delivered;
 * - anything else: answered `403` and reported as blocked — it never leaves the machine.
 *
 * HTTPS goes through `CONNECT`: the destination is known, the content is not (Vera does not
 * intercept TLS), and the attempt says so. Raw sockets that ignore the proxy variables are not
 * seen here; they find no network in the sandbox and fail.
 */

/** One request a confined program sent out through the proxy. */
export interface NetworkAttempt {
  /** When it arrived, ms since the epoch. */
  at: number;
  /** Until the response ended (or the tunnel closed, or it was refused). */
  durationMs: number;
  method: string;
  /** The destination as requested: the absolute URL, or `https://host:port` for a CONNECT tunnel. */
  url: string;
  /** The request line, headers and body (up to `BODY_PREVIEW_BYTES`), or what is known of a tunnel. */
  content: string;
  /** False when the proxy refused it (nothing left); true when it was relayed to an allowed destination. */
  delivered: boolean;
  /** The HTTP status the program got (403 when refused; 502 when an allowed destination failed). */
  status?: number;
  /** Why it was refused, or why a relayed request failed. */
  error?: string;
}

/** Bytes of a request body kept in the attempt (the rest is counted, not kept). */
export const BODY_PREVIEW_BYTES = 4096;

const REFUSAL_BODY = 'Forbidden: this network does not allow connections to that destination.\n';
const HOP_HEADERS = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export interface EgressProxyOptions {
  /** The run's own loopback ports (relayed silently). */
  internalPorts: () => ReadonlySet<number>;
  /**
   * Destinations the user allows to leave: an origin (`https://pypi.org`), a host (`pypi.org`),
   * or a `*.` wildcard of subdomains (`*.github.com`). Everything else is refused.
   */
  allow?: readonly string[];
  /**
   * Record only, refuse nothing: for unconfined programs, which reach the network past the proxy
   * anyway (a raw socket) — the proxy is then what makes their HTTP(S) requests seen.
   */
  deliverAll?: boolean;
  onAttempt: (attempt: NetworkAttempt) => void;
}

export class EgressProxy {
  private readonly server: Server;
  private readonly open = new Set<Duplex>();
  /** Attempts not yet reported (a relayed request still waiting for its answer): reported on close, never lost. */
  private readonly pending = new Set<() => void>();
  private closed = false;

  constructor(private readonly options: EgressProxyOptions) {
    // No request timeout: a relayed model stream may last as long as the turn.
    this.server = createServer({ requestTimeout: 0 }, (req, res) => this.relayRequest(req, res));
    this.server.on('connect', (req, socket, head) => this.relayTunnel(req, socket, head));
    this.server.on('clientError', (_error, socket) => socket.destroy());
  }

  /** Serves one connection from inside the sandbox (handed over by the loopback bridge). */
  handle(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.track(socket);
    this.server.emit('connection', socket);
  }

  /** Reports what is still pending and drops every connection; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const settle of [...this.pending]) settle();
    for (const s of this.open) s.destroy();
    this.open.clear();
  }

  private track(stream: Duplex): void {
    this.open.add(stream);
    stream.once('close', () => this.open.delete(stream));
  }

  /** Whether `url` is one of the run's own loopback endpoints (`loopbackPort` decides what loopback is). */
  private internal(url: string): boolean {
    const port = loopbackPort(url);
    return port !== undefined && this.options.internalPorts().has(port);
  }

  /** Reports `attempt` once: at the first of its outcome, or the proxy closing (with `unsettled`). */
  private once(unsettled: () => NetworkAttempt): (attempt?: NetworkAttempt) => void {
    let done = false;
    const settle = (attempt?: NetworkAttempt) => {
      if (done) return;
      done = true;
      this.pending.delete(onClose);
      this.options.onAttempt(attempt ?? unsettled());
    };
    const onClose = () => settle();
    this.pending.add(onClose);
    return settle;
  }

  private relayRequest(req: IncomingMessage, res: ServerResponse): void {
    const at = Date.now();
    let target: URL;
    try {
      // A proxy request carries the absolute URL; a request without one was not meant for a proxy.
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad request: a proxy request needs an absolute URL.\n');
      return;
    }
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const internal = this.internal(target.href);
    const delivered = internal || this.options.deliverAll === true || allows(this.options.allow ?? [], target);
    const body = new BodyPreview();
    req.on('data', (chunk: Buffer) => body.add(chunk));
    const attempt = (outcome: { status: number; error?: string }): NetworkAttempt => ({
      at,
      durationMs: Date.now() - at,
      method: req.method ?? 'GET',
      url: target.href,
      content: requestEgressContent(req.method ?? 'GET', target.href, visibleHeaders(req.headers), body.text()),
      delivered,
      status: outcome.status,
      ...(outcome.error ? { error: outcome.error } : {}),
    });
    if (!delivered) {
      const settle = this.once(() => attempt({ status: 403, error: 'destination not allowed' }));
      req.once('end', () => {
        res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end(REFUSAL_BODY);
        settle();
      });
      req.once('close', () => settle());
      return;
    }
    const settle = internal ? () => {} : this.once(() => attempt({ status: 0, error: 'the run ended before an answer came' }));
    const upstream = request(
      { host: internal ? '127.0.0.1' : host, port, method: req.method, path: `${target.pathname}${target.search}`, headers: forwardHeaders(req.headers) },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardHeaders(answer.headers));
        answer.pipe(res);
        settle(attempt({ status: answer.statusCode ?? 502 }));
      },
    );
    upstream.once('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`Bad gateway: ${error.message}\n`);
      else res.destroy();
      settle(attempt({ status: 502, error: error.message }));
    });
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  private relayTunnel(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const at = Date.now();
    this.track(socket);
    const authority = req.url ?? '';
    const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(authority);
    const host = match?.[1] ?? authority;
    const port = Number(match?.[2] ?? 443);
    const url = `https://${authority}`;
    const internal = this.internal(url);
    let target: URL | undefined;
    try {
      target = new URL(url);
    } catch {
      target = undefined;
    }
    const delivered = internal || (target !== undefined && (this.options.deliverAll === true || allows(this.options.allow ?? [], target)));
    const attempt = (status: number, error?: string): NetworkAttempt => ({
      at,
      durationMs: Date.now() - at,
      method: 'CONNECT',
      url,
      content: `CONNECT ${authority}\n(a TLS tunnel: what it carried is encrypted end to end and not seen)`,
      delivered,
      status,
      ...(error ? { error } : {}),
    });
    if (!delivered) {
      socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${REFUSAL_BODY.length}\r\nconnection: close\r\n\r\n${REFUSAL_BODY}`);
      this.options.onAttempt(attempt(403, 'destination not allowed'));
      return;
    }
    const settle = internal ? () => {} : this.once(() => attempt(0, 'the run ended before the tunnel opened'));
    const upstream = connect(port, internal ? '127.0.0.1' : host);
    this.track(upstream);
    const drop = () => {
      socket.destroy();
      upstream.destroy();
    };
    upstream.once('connect', () => {
      settle(attempt(200));
      socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
    upstream.once('error', (error) => {
      settle(attempt(502, error.message));
      if (socket.writable) socket.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n');
      drop();
    });
    socket.once('error', drop).once('close', drop);
  }
}

/** The first `BODY_PREVIEW_BYTES` of a request body; the rest is counted. */
class BodyPreview {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;

  add(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.kept >= BODY_PREVIEW_BYTES) return;
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  text(): string {
    const text = Buffer.concat(this.chunks).subarray(0, BODY_PREVIEW_BYTES).toString('utf8');
    return this.total > BODY_PREVIEW_BYTES ? `${text}\n… (${this.total - BODY_PREVIEW_BYTES} more bytes not kept)` : text;
  }
}

function visibleHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_HEADERS.has(name) && value !== undefined) out[name] = String(value);
  return out;
}

function forwardHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_HEADERS.has(name) || name === 'transfer-encoding') out[name] = value;
  return out;
}

/** Whether a user's allow-list lets `target` leave (see `EgressProxyOptions.allow`). */
export function allows(list: readonly string[], target: URL): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  for (const entry of list) {
    const rule = entry.trim().toLowerCase();
    if (rule.includes('://')) {
      let origin: URL;
      try {
        origin = new URL(rule);
      } catch {
        continue;
      }
      if (origin.origin === target.origin) return true;
    } else if (rule.startsWith('*.')) {
      if (host.endsWith(rule.slice(1))) return true;
    } else if (host === rule) return true;
  }
  return false;
}

/**
 * The trajectory event of one attempt: a `network_request` by the agent (whichever of its tools
 * sent it), whose egress record the `egress` verifier sees like any other send — refused ones
 * too, as attempts (`attempted`), since trying to send is what a verifier asks about.
 */
export function networkAttemptEvent(attempt: NetworkAttempt): Extract<NewEvent, { type: 'tool_call' }> {
  return {
    type: 'tool_call',
    tool: 'network_request',
    origin: 'agent',
    args: { method: attempt.method, url: attempt.url },
    result: { status: attempt.status ?? null, delivered: attempt.delivered },
    isError: !attempt.delivered || attempt.error !== undefined,
    ...(attempt.error ? { error: attempt.error } : {}),
    egress: [{ channel: 'http', destination: attempt.url, content: attempt.content }],
    ...(attempt.delivered ? {} : { attempted: { reason: `refused by the sandbox's egress proxy: ${attempt.error ?? 'destination not allowed'}` } }),
    at: attempt.at,
    durationMs: attempt.durationMs,
  };
}
