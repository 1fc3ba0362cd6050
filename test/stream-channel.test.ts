/**
 * The exec-stream channel's frame protocol (sandbox/container/stream-*.ts) over an in-memory
 * duplex pair — the same classes the host and the relay in the container run, without Docker:
 * bytes intact across many concurrent streams, per-stream back-pressure (a reader that stops
 * holds its sender at the window and nobody else), ends and errors crossing, one stream's
 * failure leaving the others alone, and a broken transport ending every stream.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo } from 'node:net';
import { PassThrough, Transform } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { bridge, type ChannelStream, StreamChannel, StreamResetError } from '../sandbox/container/stream-channel.js';
import { encodeFrame, FRAME, FrameDecoder, jsonPayload, type OpenTarget, StreamChannelError } from '../sandbox/container/stream-frames.js';

type OnOpen = (target: OpenTarget, stream: ChannelStream) => void;

/** Counts the data bytes each stream id put on the wire, host → relay. */
function wireTap(counts: Map<number, number>): Transform {
  const decoder = new FrameDecoder();
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (const f of decoder.push(chunk)) if (f.type === FRAME.data) counts.set(f.stream, (counts.get(f.stream) ?? 0) + f.payload.length);
      done(null, chunk);
    },
  });
}

const channels: StreamChannel[] = [];
afterEach(() => {
  for (const c of channels.splice(0)) c.close();
});

/** A host and a relay channel joined by two in-memory pipes (small buffers, so the transport pushes back too). */
function pair(relayOpen: OnOpen, options: { window?: number; hostOpen?: OnOpen; tap?: Map<number, number> } = {}) {
  const hostToRelay = new PassThrough({ highWaterMark: 16 * 1024 });
  const relayToHost = new PassThrough({ highWaterMark: 16 * 1024 });
  const relayInput = options.tap ? hostToRelay.pipe(wireTap(options.tap)) : hostToRelay;
  const host = new StreamChannel(relayToHost, hostToRelay, {
    side: 'host',
    onOpen: options.hostOpen ?? ((_t, s) => s.destroy(new Error('no'))),
    ...(options.window ? { window: options.window } : {}),
  });
  const relay = new StreamChannel(relayInput, relayToHost, { side: 'relay', onOpen: relayOpen, ...(options.window ? { window: options.window } : {}) });
  channels.push(host, relay);
  return { host, relay, hostToRelay, relayToHost };
}

function sha(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const echo: OnOpen = (_target, stream) => {
  stream.on('error', () => {});
  stream.pipe(stream);
};

describe('the exec-stream frame protocol', () => {
  it('carries 12 concurrent streams of 1 MiB each both ways, byte for byte', async () => {
    const { host } = pair(echo);
    const payloads = Array.from({ length: 12 }, () => randomBytes(1024 * 1024));
    const echoed = await Promise.all(
      payloads.map(async (payload) => {
        const stream = host.open({ to: 'admin' });
        const back = readAll(stream);
        // Odd chunk sizes: frames must not depend on the writer's boundaries.
        for (let i = 0; i < payload.length; i += 33_333) stream.write(payload.subarray(i, i + 33_333));
        stream.end();
        return back;
      }),
    );
    expect(echoed.map(sha)).toEqual(payloads.map(sha));
    await new Promise((r) => setImmediate(r));
    expect(host.streamCount).toBe(0);
  });

  it('a reader that stops holds its sender at the window, and the other streams keep flowing', async () => {
    const tap = new Map<number, number>();
    let stalled: ChannelStream | undefined;
    const { host } = pair(
      (_target, stream) => {
        if (!stalled) {
          stream.on('error', () => {});
          stalled = stream; // never read: its consumer is "slow"
          return;
        }
        echo(_target, stream);
      },
      { window: 64 * 1024, tap },
    );
    const slow = host.open({ to: 'admin' });
    let accepted = 0;
    const big = randomBytes(1024 * 1024);
    for (let i = 0; i < big.length; i += 16 * 1024) if (slow.write(big.subarray(i, i + 16 * 1024))) accepted++;
    // A second stream is served completely while the first is stuck.
    const fast = host.open({ to: 'admin' });
    const payload = randomBytes(512 * 1024);
    const back = readAll(fast);
    fast.end(payload);
    expect(sha(await back)).toBe(sha(payload));
    // The stuck stream sent no more than its window plus what the relay's Duplex buffers (its highWaterMark).
    const sent = tap.get(slow.id) ?? 0;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(64 * 1024 + 64 * 1024);
    expect(slow.writableLength).toBeGreaterThan(512 * 1024); // the rest waits on the host, not on the wire
    expect(accepted).toBeLessThan(64);
    // Reading resumes the flow: everything arrives.
    const rest = readAll(stalled!);
    slow.end();
    expect(sha(await rest)).toBe(sha(big));
  });

  it("a stream's end crosses as a half-close: the far side still answers after it", async () => {
    const { host } = pair((_target, stream) => {
      // (Not `for await`: its end destroys the stream, the writable half too.)
      let length = 0;
      stream.on('data', (chunk: Buffer) => (length += chunk.length));
      stream.once('end', () => setTimeout(() => stream.end(`got ${length} bytes`), 20));
    });
    const stream = host.open({ to: 'admin' });
    stream.end(Buffer.alloc(1000, 1));
    expect((await readAll(stream)).toString()).toBe('got 1000 bytes');
  });

  it("one stream's error resets only that stream, with its message; the others go on", async () => {
    const { host } = pair((_target, stream) => {
      stream.on('error', () => {});
      stream.once('data', (chunk: Buffer) => {
        if (chunk.toString() === 'fail') return stream.destroy(new Error('connect ECONNREFUSED 127.0.0.1:9'));
        stream.write(chunk);
        stream.pipe(stream);
      });
    });
    const bad = host.open({ to: 'admin' });
    const good = host.open({ to: 'admin' });
    bad.write('fail');
    const [error] = (await once(bad, 'error')) as [Error];
    expect(error).toBeInstanceOf(StreamResetError);
    expect(error.message).toBe('connect ECONNREFUSED 127.0.0.1:9');
    const back = readAll(good);
    good.end('still here');
    expect((await back).toString()).toBe('still here');
  });

  it('the host refuses what it did not open and what the relay may not ask for', async () => {
    const { relay } = pair(echo, {
      hostOpen: (target, stream) => stream.destroy(new Error(`the host does not relay ${JSON.stringify(target)}`)),
    });
    const stream = relay.open({ to: 'port', port: 22 });
    const [error] = (await once(stream, 'error')) as [Error];
    expect(error.message).toBe('the host does not relay {"to":"port","port":22}');
  });

  it('a malformed open, or data past the window, resets that stream; garbage framing ends the channel', async () => {
    const { host, hostToRelay, relayToHost, relay } = pair(echo, { window: 1024 });
    const live = host.open({ to: 'admin' });
    const liveBack = readAll(live).catch((e: Error) => e);
    // The relay receives an open with the host's parity but bad JSON, and data beyond stream 1's window.
    const resets: string[] = [];
    const spy = new FrameDecoder();
    relayToHost.on('data', (chunk: Buffer) => {
      for (const f of spy.push(chunk)) if (f.type === FRAME.reset) resets.push(`${f.stream}:${f.payload.toString()}`);
    });
    hostToRelay.write(encodeFrame(FRAME.open, 101, Buffer.from('{not json')));
    hostToRelay.write(encodeFrame(FRAME.data, live.id, Buffer.alloc(4096)));
    await new Promise((r) => setTimeout(r, 50));
    expect(resets.some((r) => r.startsWith('101:') && r.includes('malformed open'))).toBe(true);
    expect(resets.some((r) => r.startsWith(`${live.id}:`) && r.includes('past its window'))).toBe(true);
    expect(await liveBack).toBeInstanceOf(StreamResetError);
    // Another stream still works after those resets.
    const next = host.open({ to: 'admin' });
    const back = readAll(next);
    next.end('ok');
    expect((await back).toString()).toBe('ok');
    // Bytes that are no frame: the relay's channel ends, with a reason naming the problem.
    hostToRelay.write(Buffer.from('vera-sandbox listening {"port":1}\n'));
    const reason = await relay.closed;
    expect(reason).toBeInstanceOf(StreamChannelError);
    expect(reason.message).toMatch(/not a frame/);
  });

  it('the transport ending fails every open stream, and a stream opened afterwards at once', async () => {
    const { host, relayToHost } = pair((_target, stream) => stream.on('error', () => {}));
    const a = host.open({ to: 'admin' });
    const b = host.open({ to: 'admin' });
    const errors = Promise.all([once(a, 'error'), once(b, 'error')]);
    relayToHost.end();
    const [[ea], [eb]] = (await errors) as [[Error], [Error]];
    expect(ea.message).toMatch(/peer ended the stream/);
    expect(eb.message).toMatch(/peer ended the stream/);
    expect(host.isClosed).toBe(true);
    const late = host.open({ to: 'admin' });
    const [el] = (await once(late, 'error')) as [Error];
    expect(el.message).toMatch(/peer ended the stream/);
  });

  it('cuts frames that arrive split at every byte, and many frames in one chunk', () => {
    const frames = Buffer.concat([
      encodeFrame(FRAME.control, 0, jsonPayload({ type: 'unlisten' })),
      encodeFrame(FRAME.data, 5, Buffer.from('abc')),
      encodeFrame(FRAME.end, 5),
    ]);
    const one = new FrameDecoder().push(frames);
    expect(one.map((f) => [f.type, f.stream, f.payload.toString()])).toEqual([
      [FRAME.control, 0, '{"type":"unlisten"}'],
      [FRAME.data, 5, 'abc'],
      [FRAME.end, 5, ''],
    ]);
    const decoder = new FrameDecoder();
    const split = [...frames].flatMap((byte) => decoder.push(Buffer.from([byte])));
    expect(split.map((f) => [f.type, f.stream, f.payload.toString()])).toEqual(one.map((f) => [f.type, f.stream, f.payload.toString()]));
  });

  it('bridges real TCP connections: an HTTP exchange through a listener, the channel and a connect', async () => {
    const http = createServer((socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello'));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const port = (http.address() as AddressInfo).port;
    const { host } = pair((_target, stream) => bridge(connect({ port, host: '127.0.0.1', allowHalfOpen: true }), stream));
    const front = createServer({ allowHalfOpen: true }, (socket) => bridge(socket, host.open({ to: 'admin' })));
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    try {
      const response = await fetch(`http://127.0.0.1:${(front.address() as AddressInfo).port}/`);
      expect(await response.text()).toBe('hello');
    } finally {
      front.close();
      http.close();
    }
  });
});
