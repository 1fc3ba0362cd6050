import { Duplex, type Readable, type Writable } from 'node:stream';
import type { Socket } from 'node:net';
import {
  type ControlMessage,
  controlMessage,
  encodeFrame,
  FRAME,
  FrameDecoder,
  type FrameType,
  INITIAL_WINDOW,
  jsonPayload,
  MAX_DATA,
  type OpenTarget,
  openTarget,
  parsePayload,
  resetPayload,
  StreamChannelError,
} from './stream-frames.js';

/**
 * Many TCP connections over one byte stream pair (a `docker exec -i`'s stdin and stdout; a
 * `kubectl exec -i`'s would do the same): each connection is a `ChannelStream`, a Duplex whose
 * bytes travel as data frames (stream-frames.ts). Back-pressure is per stream — a sender has a
 * window of INITIAL_WINDOW bytes and the receiver grants more only as its consumer takes them —
 * so one slow connection never stalls the others, and the transport's own back-pressure (its
 * `write()` returning false) holds every sender until it drains. A stream's end and its errors
 * cross as end and reset frames; a reset touches that stream only. Both sides run this class:
 * the host opens odd stream ids, the relay even ones, so their ids never collide.
 */
export interface StreamChannelOptions {
  /** Which side this is: it decides the parity of the ids it opens. */
  side: 'host' | 'relay';
  /** The peer opened a stream to `target`; connect it (or destroy it with the reason). */
  onOpen(target: OpenTarget, stream: ChannelStream): void;
  onControl?(message: ControlMessage): void;
  /** For tests: the window each new stream starts with (default INITIAL_WINDOW). */
  window?: number;
}

export class StreamChannel {
  private readonly streams = new Map<number, ChannelStream>();
  private readonly decoder = new FrameDecoder();
  private nextId: number;
  private closedWith: Error | undefined;
  private blockedOutput = false;
  private readonly settled: Promise<Error>;
  private settle!: (error: Error) => void;
  readonly window: number;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: StreamChannelOptions,
  ) {
    this.window = options.window ?? INITIAL_WINDOW;
    this.nextId = options.side === 'host' ? 1 : 2;
    this.settled = new Promise((resolve) => (this.settle = resolve));
    input.on('data', (chunk: Buffer) => this.receive(chunk));
    input.once('end', () => this.close(new StreamChannelError('exec-stream channel: the peer ended the stream')));
    input.once('close', () => this.close(new StreamChannelError('exec-stream channel: the input closed')));
    input.once('error', (error) => this.close(new StreamChannelError(`exec-stream channel: reading failed: ${error.message}`)));
    output.on('drain', () => {
      this.blockedOutput = false;
      for (const stream of this.streams.values()) stream.flush();
    });
    output.once('error', (error) => this.close(new StreamChannelError(`exec-stream channel: writing failed: ${error.message}`)));
    output.once('close', () => this.close(new StreamChannelError('exec-stream channel: the output closed')));
  }

  /** Resolves with the reason once the channel is closed (its transport ended, broke, or `close()`). */
  get closed(): Promise<Error> {
    return this.settled;
  }

  get isClosed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Streams open now (for tests and diagnostics). */
  get streamCount(): number {
    return this.streams.size;
  }

  /** True while the transport holds more than it wants: senders wait for its drain. */
  get blocked(): boolean {
    return this.blockedOutput;
  }

  /** A new stream; the peer connects it to `target`. On a closed channel it fails at once. */
  open(target: OpenTarget): ChannelStream {
    const id = this.nextId;
    this.nextId += 2;
    const stream = new ChannelStream(id, this, this.window);
    if (this.closedWith) {
      const reason = this.closedWith;
      process.nextTick(() => stream.destroy(reason));
      return stream;
    }
    this.streams.set(id, stream);
    this.send(FRAME.open, id, jsonPayload(target));
    return stream;
  }

  control(message: ControlMessage): void {
    this.send(FRAME.control, 0, jsonPayload(message));
  }

  /** Ends every stream with `reason` and stops reading; idempotent. */
  close(reason: Error = new StreamChannelError('exec-stream channel: closed')): void {
    if (this.closedWith) return;
    this.closedWith = reason;
    for (const stream of [...this.streams.values()]) stream.destroy(reason);
    this.streams.clear();
    this.input.removeAllListeners('data');
    this.settle(reason);
  }

  /** @internal Writes one frame; false when the channel is closed. */
  send(type: FrameType, id: number, payload?: Buffer): boolean {
    if (this.closedWith || this.output.destroyed || this.output.writableEnded) return false;
    if (!this.output.write(encodeFrame(type, id, payload))) this.blockedOutput = true;
    return true;
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  private receive(chunk: Buffer): void {
    let frames;
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.close(error as Error);
      return;
    }
    for (const frame of frames) {
      if (this.closedWith) return;
      this.dispatch(frame.type, frame.stream, frame.payload);
    }
  }

  private dispatch(type: FrameType, id: number, payload: Buffer): void {
    if (type === FRAME.control) {
      const message = parsePayload(controlMessage, payload);
      // An unknown control message is ignored: a newer peer may know more.
      if (message) this.options.onControl?.(message);
      return;
    }
    if (type === FRAME.open) {
      const ours = (id % 2 === 1) === (this.options.side === 'host');
      const target = parsePayload(openTarget, payload);
      if (id === 0 || ours || this.streams.has(id) || !target) {
        this.send(FRAME.reset, id, jsonPayload({ message: 'exec-stream channel: refused a malformed open frame' }));
        return;
      }
      const stream = new ChannelStream(id, this, this.window);
      this.streams.set(id, stream);
      try {
        this.options.onOpen(target, stream);
      } catch (error) {
        stream.destroy(error as Error);
      }
      return;
    }
    // Frames of a stream that is gone (reset meanwhile, or never existed) are dropped: they were in flight.
    const stream = this.streams.get(id);
    if (!stream) return;
    if (type === FRAME.data) stream.receiveData(payload);
    else if (type === FRAME.end) stream.receiveEnd();
    else if (type === FRAME.window) stream.receiveWindow(payload.length === 4 ? payload.readUInt32BE(0) : 0);
    else if (type === FRAME.reset) stream.receiveReset(parsePayload(resetPayload, payload)?.message ?? 'reset by the peer');
  }
}

/** The far side reset this stream (its connection failed or was refused). */
export class StreamResetError extends StreamChannelError {
  constructor(message: string) {
    super(message);
    this.name = 'StreamResetError';
  }
}

/** One connection over the channel: write to send, read what the peer sent; `end()` half-closes. */
export class ChannelStream extends Duplex {
  /** Bytes this side may still send before the peer grants more. */
  private credit: number;
  /** Bytes the peer may still send (its window as this side sees it). */
  private peerWindow: number;
  /** Bytes received and handed to the consumer but not yet granted back. */
  private toGrant = 0;
  /** Bytes received while the consumer was full: granted on its next read. */
  private held = 0;
  private grantScheduled = false;
  private pending: { chunk: Buffer; callback: (error?: Error | null) => void } | undefined;
  private sentEnd = false;
  private gotEnd = false;
  private resetByPeer = false;

  constructor(
    readonly id: number,
    private readonly channel: StreamChannel,
    window: number,
  ) {
    super({ allowHalfOpen: true });
    // A stream's failure is the peer's business (a reset frame) and its user's, if it listens:
    // never an uncaught 'error' that would end the process and every other stream with it.
    this.on('error', () => {});
    this.credit = window;
    this.peerWindow = window;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.pending = { chunk, callback };
    this.flush();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.sentEnd = true;
    this.channel.send(FRAME.end, this.id);
    callback();
    this.settleIfDone();
  }

  override _read(): void {
    if (this.held === 0) return;
    const n = this.held;
    this.held = 0;
    this.grant(n);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!(this.sentEnd && this.gotEnd) && !this.resetByPeer) {
      this.channel.send(FRAME.reset, this.id, jsonPayload({ message: (error?.message ?? 'the connection was closed').slice(0, 4000) }));
    }
    this.channel.forget(this.id);
    const pending = this.pending;
    this.pending = undefined;
    pending?.callback(error);
    callback(error);
  }

  /** @internal Sends what the pending write still holds, as far as the window and the transport allow. */
  flush(): void {
    const pending = this.pending;
    if (!pending || this.destroyed) return;
    while (pending.chunk.length > 0 && this.credit > 0 && !this.channel.blocked) {
      const n = Math.min(pending.chunk.length, this.credit, MAX_DATA);
      if (!this.channel.send(FRAME.data, this.id, pending.chunk.subarray(0, n))) return;
      this.credit -= n;
      pending.chunk = pending.chunk.subarray(n);
    }
    if (pending.chunk.length === 0) {
      this.pending = undefined;
      pending.callback();
    }
  }

  /** @internal */
  receiveData(payload: Buffer): void {
    if (this.gotEnd || payload.length > this.peerWindow) {
      this.destroy(new StreamChannelError(`exec-stream channel: stream ${this.id} sent ${payload.length} bytes past its window or its end`));
      return;
    }
    this.peerWindow -= payload.length;
    // push() false: the consumer is full; the window stays spent until it reads (back-pressure).
    if (this.push(payload)) this.grant(payload.length);
    else this.held += payload.length;
  }

  /** @internal */
  receiveEnd(): void {
    this.gotEnd = true;
    this.push(null);
    this.settleIfDone();
  }

  /** @internal The peer consumed `n` more bytes: send that much more. */
  receiveWindow(n: number): void {
    this.credit += n;
    this.flush();
  }

  /** @internal */
  receiveReset(message: string): void {
    this.resetByPeer = true;
    this.destroy(new StreamResetError(message));
  }

  /** Grants are batched per tick: one window frame for many small reads. */
  private grant(n: number): void {
    this.peerWindow += n;
    this.toGrant += n;
    if (this.grantScheduled) return;
    this.grantScheduled = true;
    process.nextTick(() => {
      this.grantScheduled = false;
      if (this.destroyed || this.toGrant === 0) return;
      const payload = Buffer.allocUnsafe(4);
      payload.writeUInt32BE(this.toGrant, 0);
      this.toGrant = 0;
      this.channel.send(FRAME.window, this.id, payload);
    });
  }

  /** Both directions ended cleanly: the stream is done (no reset is sent). */
  private settleIfDone(): void {
    if (this.sentEnd && this.gotEnd) {
      this.channel.forget(this.id);
      // Let the consumer read what is buffered first; autoDestroy then ends the Duplex.
    }
  }
}

/**
 * Joins a TCP socket and a channel stream both ways: bytes, half-closes and errors. Either side
 * failing destroys the other (the peer sees a reset); a clean end on both closes both.
 */
export function bridge(socket: Socket, stream: ChannelStream): void {
  socket.pipe(stream);
  stream.pipe(socket);
  socket.on('error', (error) => stream.destroy(error));
  stream.on('error', () => socket.destroy());
  // Closed without an error (destroy() or the peer's RST seen as close): do not leave the stream open.
  socket.once('close', () => {
    if (!stream.destroyed && !(stream.writableFinished && stream.readableEnded)) stream.destroy(new Error('the connection closed'));
  });
  stream.once('close', () => {
    if (!socket.destroyed && !(socket.writableFinished && socket.readableEnded)) socket.destroy();
  });
}
