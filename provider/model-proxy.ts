import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPlainObject } from '../engine/json.js';
import { routeUrl } from './model-route.js';
import { RateLimiter, type RateLimits } from './rate-limiter.js';
import { DEFAULT_RETRY, isRetryableStatus, retryAfterMs, retryDelayMs, type RetryOptions } from './retry-policy.js';
import type { ProviderStats } from '../engine/record-schema.js';
import { RequestLog } from './model-request-log.js';
import { UsageReader, type TokenCount } from './usage.js';

// What one run's model traffic looked like: the figures a record keeps, so the record schema defines them.
export type { ProviderStats } from '../engine/record-schema.js';

export interface ModelProxyOptions extends RateLimits, Partial<RetryOptions> {
  /** For tests: replaces the random jitter of the backoff. */
  random?: () => number;
}

export interface StartedModelProxy extends AsyncDisposable {
  readonly url: string;
  /**
   * The base URL a run's client uses for `upstream`: same API, traffic attributed to `runToken`.
   * `control`: a control agent's (counted, but its prompts are not the agent's: not logged).
   */
  routeFor(runToken: string, upstream: string, client?: 'agent' | 'control'): string;
  stats(runToken: string): ProviderStats;
  totals(): ProviderStats;
  stop(): Promise<void>;
}

export function emptyStats(): ProviderStats {
  return { requests: 0, retries: 0, rateLimited: 0, transientErrors: 0, waitedMs: 0, usage: { input: 0, output: 0 }, byModel: {} };
}

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'accept-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

/**
 * A loopback proxy in front of the model providers, shared by every worker of a run: it holds
 * the run-wide limits (concurrency, requests and tokens per minute), retries 429 and transient
 * 5xx answers with backoff that honours Retry-After (and pauses everyone on a 429), streams
 * answers through untouched, and counts each run's requests, retries, waits and tokens by the
 * run token in the URL. Any agent that takes a base URL — the reference agent, the CLI agents,
 * the LLM adversary — goes through it without knowing.
 */
export async function startModelProxy(options: ModelProxyOptions = {}): Promise<StartedModelProxy> {
  const retry: RetryOptions = {
    maxRetries: options.maxRetries ?? DEFAULT_RETRY.maxRetries,
    baseMs: options.baseMs ?? DEFAULT_RETRY.baseMs,
    maxMs: options.maxMs ?? DEFAULT_RETRY.maxMs,
  };
  const limiter = new RateLimiter({
    ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {}),
    ...(options.rpm !== undefined ? { rpm: options.rpm } : {}),
    ...(options.tpm !== undefined ? { tpm: options.tpm } : {}),
  });
  const perRun = new Map<string, ProviderStats>();
  /** The agent's model requests of each run (what the model was offered), read once at the run's end. */
  const logs = new Map<string, RequestLog>();
  const total = emptyStats();
  const statsOf = (token: string) => {
    let s = perRun.get(token);
    if (!s) perRun.set(token, (s = emptyStats()));
    return s;
  };
  const count = (token: string, update: (s: ProviderStats) => void) => {
    update(statsOf(token));
    update(total);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `vera model proxy: ${error.message}`, type: 'proxy_error' } }));
      } else res.destroy(error);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url.startsWith('/stats/')) {
      const token = decodeURIComponent(url.slice('/stats/'.length));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(perRun.get(token) ?? emptyStats()));
      if (perRun.has(token)) perRun.delete(token); // read once, at the end of the run
      return;
    }
    if (req.method === 'GET' && url.startsWith('/requests/')) {
      const token = decodeURIComponent(url.slice('/requests/'.length));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(logs.get(token) ?? new RequestLog()));
      logs.delete(token); // read once, at the end of the run
      return;
    }
    // `/r/…`: an agent's request; `/c/…`: a control agent's.
    const match = /^\/([rc])\/([^/]+)\/([A-Za-z0-9_-]+)(\/[^?]*)?(\?.*)?$/.exec(url);
    if (!match) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `vera model proxy: no route for ${url}` } }));
      return;
    }
    const agentRequest = match[1] === 'r';
    const token = decodeURIComponent(match[2]!);
    const upstream = Buffer.from(match[3]!, 'base64url').toString('utf8');
    if (!/^https?:\/\//.test(upstream)) throw new Error(`bad upstream ${upstream}`);
    const path = match[4] ?? '';
    const target = `${upstream}${path}${match[5] ?? ''}`;

    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let model = 'unknown';
    let stream = false;
    let parsed: unknown;
    if (body.length > 0 && (req.headers['content-type'] ?? '').includes('json')) {
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        // Not JSON: forwarded as it is.
      }
    }
    if (isPlainObject(parsed)) {
      if (typeof parsed.model === 'string') model = parsed.model;
      stream = parsed.stream === true;
    }
    // The Gemini API names the model in the path (`…/models/gemini-2.5-flash:generateContent`).
    if (model === 'unknown') model = /\/models\/([^/:]+):/.exec(path)?.[1] ?? model;
    if (agentRequest && parsed !== undefined) {
      let log = logs.get(token);
      if (!log) logs.set(token, (log = new RequestLog()));
      log.add(parsed, model);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort(new Error('client went away'));
    });
    const estimate = Math.ceil(body.length / 4);
    count(token, (s) => s.requests++);

    for (let attempt = 0; ; attempt++) {
      const grant = await limiter.acquire(estimate, aborted.signal);
      count(token, (s) => (s.waitedMs += grant.waitedMs));
      let upstreamResponse: Response;
      try {
        upstreamResponse = await fetch(target, {
          method: req.method ?? 'GET',
          headers,
          ...(body.length > 0 && req.method !== 'GET' && req.method !== 'HEAD' ? { body } : {}),
          redirect: 'manual',
          signal: aborted.signal,
        });
      } catch (error) {
        grant.release(0);
        if (aborted.signal.aborted || attempt >= retry.maxRetries) throw unreachable(target, error, attempt + 1);
        const wait = retryDelayMs(attempt, undefined, retry, options.random);
        count(token, (s) => {
          s.retries++;
          s.transientErrors++;
          s.waitedMs += wait;
        });
        await sleep(wait, undefined, { signal: aborted.signal });
        continue;
      }
      if (isRetryableStatus(upstreamResponse.status) && attempt < retry.maxRetries) {
        await upstreamResponse.arrayBuffer().catch(() => undefined);
        grant.release(0);
        const hinted = retryAfterMs(upstreamResponse.headers);
        const wait = retryDelayMs(attempt, hinted, retry, options.random);
        const limited = upstreamResponse.status === 429;
        // A rate limit is the account's, not this request's: everyone waits.
        if (limited) limiter.pauseUntil(Date.now() + wait);
        count(token, (s) => {
          s.retries++;
          if (limited) s.rateLimited++;
          else s.transientErrors++;
          s.waitedMs += wait;
        });
        await sleep(wait, undefined, { signal: aborted.signal });
        continue;
      }
      if (upstreamResponse.status === 429) count(token, (s) => s.rateLimited++);
      await relay(upstreamResponse, res, stream || (upstreamResponse.headers.get('content-type') ?? '').includes('event-stream'), (usage) => {
        grant.release(usage.input + usage.output || estimate);
        count(token, (s) => {
          s.usage.input += usage.input;
          s.usage.output += usage.output;
          const m = (s.byModel[model] ??= { input: 0, output: 0, requests: 0 });
          m.requests++;
          m.input += usage.input;
          m.output += usage.output;
        });
      });
      return;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }));
  return {
    url,
    routeFor: (runToken, upstream, client) => routeUrl(url, runToken, upstream, client),
    stats: (runToken) => perRun.get(runToken) ?? emptyStats(),
    totals: () => total,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** Streams the upstream answer to the client unchanged, reading its usage on the way. */
async function relay(upstream: Response, res: ServerResponse, stream: boolean, done: (usage: TokenCount) => void): Promise<void> {
  const headers: Record<string, string> = {};
  upstream.headers.forEach((value, name) => {
    // fetch already decoded the body: its length and encoding headers no longer apply.
    if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') headers[name] = value;
  });
  res.writeHead(upstream.status, headers);
  const reader = new UsageReader(stream);
  const decoder = new TextDecoder();
  try {
    if (upstream.body) {
      for await (const chunk of upstream.body as AsyncIterable<Uint8Array>) {
        reader.push(decoder.decode(chunk, { stream: true }));
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
      }
    }
    res.end();
  } finally {
    done(reader.end());
  }
}

/**
 * Why the model endpoint could not be reached, naming it: undici says only "fetch failed", with the
 * reason (ENOTFOUND, ECONNREFUSED, a certificate error) in its cause.
 */
function unreachable(target: string, error: unknown, attempts: number): Error {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const why = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : (error as Error).message;
  let origin = target;
  try {
    origin = new URL(target).origin;
  } catch {
    // Not a URL: named as it is.
  }
  const hint = /ENOTFOUND|EAI_AGAIN/.test(why)
    ? " (no such host from here: set the agent's baseURL, or OPENAI_BASE_URL, to an endpoint this machine reaches)"
    : /ECONNREFUSED/.test(why)
      ? ' (nothing listens there: is the model server running?)'
      : '';
  return new Error(`cannot reach the model endpoint ${origin}: ${why}${hint}, after ${attempts} attempt${attempts === 1 ? '' : 's'}`);
}
