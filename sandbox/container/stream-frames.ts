import { z } from 'zod';
import { VeraError } from '../../engine/errors.js';

/**
 * The frames of the exec-stream channel (stream-channel.ts): the host and the relay inside the
 * sandbox container (stream-relay.ts) multiplex many TCP connections over the one byte stream a
 * `docker exec -i` gives them (its stdin one way, its stdout the other). Every frame is a 9-byte
 * header — type (u8), stream id (u32, big-endian), payload length (u32) — and its payload:
 *
 *   control  stream 0, JSON (`controlMessage`): hello, listen/listening, unlisten
 *   open     JSON (`openTarget`): a new stream and where its far side must connect
 *   data     raw bytes, at most MAX_DATA, never more than the receiver's window allows
 *   end      empty: the sender writes no more on this stream (half-close, like TCP FIN)
 *   reset    JSON (`resetPayload`): the stream failed; both sides drop it (like TCP RST)
 *   window   u32: the receiver consumed that many more bytes; the sender may send them
 *
 * Binary for data (no base64 cost on the hot path), JSON validated with zod where a frame carries
 * structure. A malformed header is fatal for the whole channel (the framing is lost); a bad frame
 * on one stream only resets that stream.
 */
export const FRAME = { control: 0, open: 1, data: 2, end: 3, reset: 4, window: 5 } as const;
export type FrameType = (typeof FRAME)[keyof typeof FRAME];

export const HEADER_BYTES = 9;
/** Largest data payload: a chunk larger than this is split. */
export const MAX_DATA = 64 * 1024;
/** Largest payload of any frame; a header announcing more is a broken channel. */
export const MAX_PAYLOAD = 1024 * 1024;
/** Bytes a sender may have in flight on one stream before the receiver grants more. */
export const INITIAL_WINDOW = 256 * 1024;

/** Where the far side connects a new stream: the sandbox server (host → relay) or a host loopback port (relay → host). */
export const openTarget = z.discriminatedUnion('to', [
  z.strictObject({ to: z.literal('admin') }),
  z.strictObject({ to: z.literal('port'), port: z.int().min(1).max(65535) }),
]);
export type OpenTarget = z.infer<typeof openTarget>;

export const resetPayload = z.object({ message: z.string().max(4096) });

export const controlMessage = z.discriminatedUnion('type', [
  /** relay → host, first frame: the relay's protocol and its PID inside the container (kept on reset). */
  z.strictObject({ type: z.literal('hello'), protocol: z.int(), pid: z.int().positive() }),
  /** host → relay: listen on 127.0.0.1:<port> for each port, then write the marker of `id` (see stream-relay.ts). */
  z.strictObject({ type: z.literal('listen'), id: z.string().regex(/^[a-z0-9-]{1,64}$/), ports: z.array(z.int().min(1).max(65535)).max(64) }),
  /** relay → host: the answer to `listen` (the marker says the same inside the container). */
  z.strictObject({ type: z.literal('listening'), id: z.string(), error: z.string().optional() }),
  /** host → relay: close every listener (a pooled container's reset: the next case has other ports). */
  z.strictObject({ type: z.literal('unlisten') }),
]);
export type ControlMessage = z.infer<typeof controlMessage>;

/** The channel's framing broke, or its transport ended: every stream on it is gone. */
export class StreamChannelError extends VeraError {
  constructor(message: string) {
    super('SANDBOX_FAILED', message);
    this.name = 'StreamChannelError';
  }
}

export interface Frame {
  type: FrameType;
  stream: number;
  payload: Buffer;
}

export function encodeFrame(type: FrameType, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt8(type, 0);
  frame.writeUInt32BE(stream, 1);
  frame.writeUInt32BE(payload.length, 5);
  payload.copy(frame, HEADER_BYTES);
  return frame;
}

export function jsonPayload(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

/** Parses a JSON payload with `schema`; undefined when it is not JSON or does not fit. */
export function parsePayload<S extends z.ZodType>(schema: S, payload: Buffer): z.output<S> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

const TYPES = new Set<number>(Object.values(FRAME));

/**
 * Cuts a byte stream into frames. Chunks arrive at arbitrary boundaries (a pipe, docker's
 * stream copy), so a frame may span many chunks and a chunk hold many frames.
 */
export class FrameDecoder {
  private buffered: Buffer[] = [];
  private length = 0;

  /** The frames completed by `chunk`; throws StreamChannelError on a header that cannot be a frame. */
  push(chunk: Buffer): Frame[] {
    this.buffered.push(chunk);
    this.length += chunk.length;
    const frames: Frame[] = [];
    while (this.length >= HEADER_BYTES) {
      const head = this.peek(HEADER_BYTES);
      const type = head.readUInt8(0);
      const size = head.readUInt32BE(5);
      if (!TYPES.has(type) || size > MAX_PAYLOAD) {
        throw new StreamChannelError(
          `exec-stream channel: not a frame (type ${type}, ${size} bytes; first bytes ${JSON.stringify(head.toString('latin1'))}) — is the relay from another image?`,
        );
      }
      if (this.length < HEADER_BYTES + size) break;
      const whole = this.take(HEADER_BYTES + size);
      frames.push({ type: type as FrameType, stream: whole.readUInt32BE(1), payload: whole.subarray(HEADER_BYTES) });
    }
    return frames;
  }

  private peek(n: number): Buffer {
    if (this.buffered[0]!.length < n) this.buffered = [Buffer.concat(this.buffered)];
    return this.buffered[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    if (this.buffered[0]!.length < n) this.buffered = [Buffer.concat(this.buffered)];
    const first = this.buffered[0]!;
    const out = first.subarray(0, n);
    if (first.length === n) this.buffered.shift();
    else this.buffered[0] = first.subarray(n);
    this.length -= n;
    return out;
  }
}
