/**
 * A local HTTP server that speaks real LLM wire protocols (OpenAI Chat Completions, OpenAI
 * Responses, Anthropic Messages, the Gemini API) and
 * answers from a policy or a script instead of a model. It is a scripted stand-in for tests,
 * demos and benchmarks: it reads no English and decides nothing on its own.
 *
 * The core here is wire-independent: it reads the body, asks a `WireAdapter` to turn it into a
 * `Conversation`, asks the policy for a `ModelReply`, and lets the adapter render it. Adding a
 * wire protocol means writing an adapter and listing it in `wireAdapters()`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { RunPlan } from '../engine/scripted-plan.js';
import { planSinksInProcess } from '../provider/scripted-plan-sinks.js';
import { anthropicMessagesWire } from './anthropic-messages-wire.js';
import { chatCompletionsWire } from './chat-completions-wire.js';
import type { Conversation, ModelPolicy, ModelReply } from './conversation.js';
import { isPlainObject, resolveToolName } from './directives.js';
import { resolvePolicy, type PolicyName } from './policies/index.js';
import { geminiWire } from './gemini-wire.js';
import { responsesWire } from './responses-wire.js';
import { scriptPolicy, type ScriptPolicy, type ScriptStep, ScriptedHttpError } from './script.js';
import { VeraError } from '../engine/errors.js';

export interface ScriptedModelServerOptions {
  /** A bundled policy by name, or your own. Give exactly one of `policy` and `script`. */
  policy?: PolicyName | ModelPolicy;
  /** Fixed replies, one per request, in order. */
  script?: ScriptStep[];
  /** Delay before each response, to simulate model latency. Default 0. */
  latencyMs?: number;
  /** Default 0: an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Keep every request in `requests` (default true). Turn off for long benchmarks. */
  recordRequests?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Parsed JSON body (undefined for bodiless or unparsable requests). */
  body: unknown;
  /** The normalized conversation, for model requests that parsed. */
  conversation?: Conversation;
  /** The reply sent, with the tool names and call ids as they went out. */
  reply?: WireReply;
  status: number;
  /** The run the request came from, when it came under `/runs/<token>/` (its plan answered it). */
  runToken?: string;
  /** The error message sent, for non-2xx responses. */
  error?: string;
  /** Arrival time, ms since the epoch. */
  time: number;
  durationMs: number;
}

export interface ModelServerStats {
  requests: number;
  inFlight: number;
  maxInFlight: number;
}

export interface StartedModelServer extends AsyncDisposable {
  /** Base URL for an OpenAI client (`http://127.0.0.1:<port>/v1`). */
  url: string;
  /** The server's origin without `/v1` (`http://127.0.0.1:<port>`), e.g. for ANTHROPIC_BASE_URL. */
  origin: string;
  port: number;
  /** Every request received so far (unless `recordRequests: false`). */
  requests: RecordedRequest[];
  /** Present when the server runs a script: how far it got. */
  script?: ScriptPolicy;
  stats(): ModelServerStats;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

/** A reply as it goes out: names as the request lists them, server-assigned call ids. */
export interface WireReply {
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
}

export interface WireContext {
  /** 1-based number of this request on this server. */
  requestNumber: number;
  /** Model name to report (the request's, or `vera-scripted`). */
  model: string;
  /** Unix seconds. */
  created: number;
  /** Estimated as ceil(chars / 4) of the prompt and of the completion. */
  usage: { promptTokens: number; completionTokens: number };
}

/** Where a request went: its path (without a run prefix) and query. */
export interface WireRequest {
  path: string;
  query: URLSearchParams;
}

/** One wire protocol: where it listens and how it converts requests and replies. */
export interface WireAdapter {
  readonly name: string;
  /** POST path it serves, e.g. `/v1/chat/completions` (as shown in errors, when `pathPattern` is set). */
  readonly path: string;
  /**
   * For protocols that name the model and the method in the path (the Gemini API's
   * `/v1beta/models/{model}:generateContent`): the POST paths it serves, instead of `path`.
   */
  readonly pathPattern?: RegExp;
  /** Throws WireRequestError for malformed requests (sent as HTTP 400). */
  toConversation(body: unknown, request?: WireRequest): Conversation;
  isStream(body: unknown, request?: WireRequest): boolean;
  replyBody(reply: WireReply, ctx: WireContext, body: unknown, request?: WireRequest): unknown;
  /** The complete SSE response text. */
  replyStream(reply: WireReply, ctx: WireContext, body: unknown, request?: WireRequest): string;
  errorBody(message: string, type: string, code: string | null, param?: string): unknown;
  /**
   * Auxiliary POST endpoints of this protocol that answer from the request alone (e.g. Anthropic's
   * `count_tokens`): no policy call, no script step. Path → JSON response body.
   */
  readonly probes?: Readonly<Record<string, (body: unknown) => unknown>>;
  /** The same for paths that carry the model (the Gemini API's `…/models/{model}:countTokens`). */
  readonly probePatterns?: ReadonlyArray<{ pattern: RegExp; probe: (body: unknown, request: WireRequest) => unknown }>;
}

/** A malformed request; the server answers 400 in the adapter's error format. */
export class WireRequestError extends VeraError {
  readonly status = 400;
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super('WIRE_REQUEST_INVALID', message);
    this.name = 'WireRequestError';
  }
}

export const DEFAULT_MODEL = 'vera-scripted';
const PLAN_ROUTE = /^\/__vera\/plans\/([A-Za-z0-9_-]{1,64})$/;
const RUN_PREFIX = /^\/runs\/([A-Za-z0-9_-]{1,64})(?=\/|$)/;

/** A `RunPlan` from a PUT body, or why it is not one. */
function runPlan(raw: string): RunPlan | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'the plan is not JSON';
  }
  const calls = (v: unknown) => Array.isArray(v) && v.every((c) => isPlainObject(c) && typeof c.tool === 'string' && isPlainObject(c.args));
  if (!isPlainObject(value) || !Array.isArray(value.turns) || !Array.isArray(value.injections)) return 'a plan has "turns" and "injections" lists';
  if (!value.turns.every((t: unknown) => isPlainObject(t) && typeof t.text === 'string' && calls(t.calls)))
    return 'each turn is { text, calls: [{ tool, args }] }';
  if (!value.injections.every((i: unknown) => isPlainObject(i) && typeof i.id === 'string' && typeof i.payload === 'string' && calls(i.calls))) {
    return 'each injection is { id, payload, calls: [{ tool, args }] }';
  }
  return value as unknown as RunPlan;
}
const MAX_BODY_BYTES = 32 * 1024 * 1024;

// Built lazily: the adapters import WireRequestError from this module (an import cycle that is
// safe as long as neither side touches the other at module top level).
function wireAdapters(): WireAdapter[] {
  return [chatCompletionsWire, responsesWire, anthropicMessagesWire, geminiWire];
}

function openAiError(message: string, type: string, code: string | null) {
  return { error: { message, type, param: null, code } };
}

/**
 * The serialised length of a tool's parameter schema, by tool name and description: an agent
 * sends the same tool list with every request, and serialising forty schemas per request to
 * estimate tokens was most of this server's time in a long run.
 */
const schemaChars = new Map<string, number>();
function parametersChars(t: Conversation['tools'][number]): number {
  const key = `${t.name}\u0000${t.description ?? ''}`;
  let n = schemaChars.get(key);
  if (n === undefined) {
    if (schemaChars.size > 10_000) schemaChars.clear();
    n = JSON.stringify(t.parameters ?? {}).length;
    schemaChars.set(key, n);
  }
  return n;
}

/** Characters a model would read: message texts, tool call arguments, tool definitions. */
function promptChars(c: Conversation): number {
  let n = 0;
  for (const m of c.messages) {
    n += m.text.length;
    for (const call of m.toolCalls ?? []) n += call.name.length + JSON.stringify(call.arguments).length;
  }
  for (const t of c.tools) n += t.name.length + (t.description?.length ?? 0) + parametersChars(t);
  return n;
}

function completionChars(reply: WireReply): number {
  let n = reply.text.length;
  for (const call of reply.toolCalls) n += call.name.length + JSON.stringify(call.arguments).length;
  return n;
}

const tokens = (chars: number) => Math.ceil(chars / 4);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new WireRequestError(`Request body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, requestId: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': requestId,
  });
  res.end(text);
}

function normalizeReply(reply: ModelReply, conversation: Conversation, nextCallId: () => string): WireReply {
  if (typeof reply !== 'object' || reply === null) {
    throw new Error(`Policy returned ${JSON.stringify(reply)} instead of a reply object`);
  }
  const calls: unknown = reply.toolCalls ?? [];
  if (!Array.isArray(calls)) throw new Error('Policy returned `toolCalls` that is not an array');
  const toolCalls = calls.map((call: unknown) => {
    if (!isPlainObject(call) || typeof call.name !== 'string') {
      throw new Error(`Policy returned a tool call without a name: ${JSON.stringify(call)}`);
    }
    return {
      id: nextCallId(),
      name: resolveToolName(call.name, conversation.tools, isPlainObject(call.arguments) ? call.arguments : undefined) ?? call.name,
      arguments: isPlainObject(call.arguments) ? call.arguments : {},
    };
  });
  return { text: typeof reply.text === 'string' ? reply.text : '', toolCalls };
}

/** Starts the server; resolves once it is listening. */
export async function startScriptedModelServer(options: ScriptedModelServerOptions): Promise<StartedModelServer> {
  if ((options.policy === undefined) === (options.script === undefined)) {
    throw new Error('startScriptedModelServer needs exactly one of `policy` and `script`');
  }
  const script = options.script ? scriptPolicy(options.script) : undefined;
  const policy: ModelPolicy = script ?? resolvePolicy(options.policy!);
  const latencyMs = Math.max(0, options.latencyMs ?? 0);
  const record = options.recordRequests !== false;
  const adapters = new Map(
    wireAdapters()
      .filter((a) => !a.pathPattern)
      .map((a) => [a.path, a]),
  );
  const patterned = wireAdapters().filter((a) => a.pathPattern);
  const adapterFor = (path: string) => adapters.get(path) ?? patterned.find((a) => a.pathPattern!.test(path));
  const probes = new Map(wireAdapters().flatMap((a) => Object.entries(a.probes ?? {}).map(([path, probe]) => [path, { adapter: a, probe }] as const)));
  const probeFor = (path: string) => {
    const exact = probes.get(path);
    if (exact) return exact;
    for (const adapter of patterned) {
      const hit = adapter.probePatterns?.find((p) => p.pattern.test(path));
      if (hit) return { adapter, probe: hit.probe };
    }
    return undefined;
  };
  const requests: RecordedRequest[] = [];
  const plans = new Map<string, RunPlan>();
  let total = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let callCounter = 0;
  const nextCallId = () => `call_${++callCounter}`;

  async function handle(req: IncomingMessage, res: ServerResponse, entry: RecordedRequest, n: number, query = new URLSearchParams()): Promise<void> {
    const requestId = `req_vera${n}`;
    const fail = (status: number, message: string, body: unknown) => {
      entry.status = status;
      entry.error = message;
      sendJson(res, status, body, requestId);
    };
    // A run's plan arrives out of band (engine/scripted-plan.ts); its requests come under /runs/<token>/.
    const planRoute = PLAN_ROUTE.exec(entry.path);
    if (planRoute) {
      const token = planRoute[1]!;
      if (req.method === 'DELETE') plans.delete(token);
      else if (req.method === 'PUT') {
        const parsed = runPlan(await readBody(req));
        if (typeof parsed === 'string') {
          fail(400, parsed, openAiError(parsed, 'invalid_request_error', null));
          return;
        }
        plans.set(token, parsed);
      } else {
        fail(405, 'plans are PUT or DELETE', openAiError('plans are PUT or DELETE', 'invalid_request_error', null));
        return;
      }
      entry.status = 204;
      res.writeHead(204, { 'x-request-id': requestId });
      res.end();
      return;
    }
    const runRoute = RUN_PREFIX.exec(entry.path);
    let plan: RunPlan | undefined;
    if (runRoute) {
      entry.runToken = runRoute[1]!;
      entry.path = entry.path.slice(runRoute[0].length) || '/';
      plan = plans.get(entry.runToken);
    }
    const path = entry.path;
    const wireRequest: WireRequest = { path, query };
    const adapter = adapterFor(path);
    if (req.method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
      const model = (id: string) => ({ id, object: 'model', created: 0, owned_by: 'vera' });
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      entry.status = 200;
      sendJson(res, 200, path === '/v1/models' ? { object: 'list', data: [model(DEFAULT_MODEL)] } : model(id), requestId);
      return;
    }
    // Claude Code checks that its base URL answers (`HEAD /`) before the first request.
    if ((req.method === 'HEAD' || req.method === 'GET') && path === '/') {
      entry.status = 200;
      res.writeHead(200, { 'content-type': 'text/plain', 'x-request-id': requestId });
      res.end(req.method === 'HEAD' ? undefined : 'vera scripted model server\n');
      return;
    }
    const probe = req.method === 'POST' ? probeFor(path) : undefined;
    if (probe) {
      try {
        const raw = await readBody(req);
        entry.body = raw === '' ? undefined : JSON.parse(raw);
        entry.status = 200;
        sendJson(res, 200, probe.probe(entry.body, wireRequest), requestId);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        fail(400, message, probe.adapter.errorBody(message, 'invalid_request_error', null));
      }
      return;
    }
    if (!adapter || req.method !== 'POST') {
      const message = `Unknown request URL: ${req.method} ${path}. The scripted model server serves POST ${wireAdapters()
        .map((a) => a.path)
        .join(', POST ')} and GET /v1/models.`;
      fail(404, message, openAiError(message, 'invalid_request_error', 'unknown_url'));
      return;
    }
    let conversation: Conversation;
    try {
      const raw = await readBody(req);
      try {
        entry.body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        throw new WireRequestError('We could not parse the JSON body of your request.');
      }
      conversation = adapter.toConversation(entry.body, wireRequest);
      entry.conversation = conversation;
    } catch (err) {
      const e = err instanceof WireRequestError ? err : new WireRequestError(String((err as Error)?.message ?? err));
      fail(400, e.message, adapter.errorBody(e.message, 'invalid_request_error', null, e.param));
      return;
    }
    let reply: WireReply;
    try {
      reply = normalizeReply(await policy(conversation, plan ? { plan } : {}), conversation, nextCallId);
    } catch (err) {
      if (latencyMs > 0) await delay(latencyMs);
      if (err instanceof ScriptedHttpError) {
        // A provider-style error (rate limit, overload) with its headers, e.g. Retry-After.
        for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
        const type = err.status === 429 ? 'rate_limit_error' : err.status >= 500 ? 'server_error' : 'invalid_request_error';
        fail(err.status, err.message, adapter.errorBody(err.message, type, err.status === 429 ? 'rate_limit_exceeded' : null));
        return;
      }
      const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'policy_error';
      const message = `Scripted model failed: ${err instanceof Error ? err.message : String(err)}`;
      fail(500, message, adapter.errorBody(message, 'server_error', code));
      return;
    }
    entry.reply = reply;
    if (latencyMs > 0) await delay(latencyMs);
    const ctx: WireContext = {
      requestNumber: n,
      model: conversation.model || DEFAULT_MODEL,
      created: Math.floor(Date.now() / 1000),
      usage: { promptTokens: tokens(promptChars(conversation)), completionTokens: tokens(completionChars(reply)) },
    };
    entry.status = 200;
    if (adapter.isStream(entry.body, wireRequest)) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-request-id': requestId,
      });
      res.end(adapter.replyStream(reply, ctx, entry.body, wireRequest));
    } else {
      sendJson(res, 200, adapter.replyBody(reply, ctx, entry.body, wireRequest), requestId);
    }
  }

  const server = createServer((req, res) => {
    // A run's plan is not model traffic: neither recorded nor counted.
    if (req.url?.startsWith('/__vera/plans/')) {
      const entry: RecordedRequest = { method: req.method ?? 'PUT', path: req.url, body: undefined, status: 0, time: Date.now(), durationMs: 0 };
      handle(req, res, entry, 0).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
      return;
    }
    const n = ++total;
    inFlight++;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
    const started = Date.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const entry: RecordedRequest = {
      method: req.method ?? 'GET',
      path: q < 0 ? url : url.slice(0, q),
      body: undefined,
      status: 0,
      time: started,
      durationMs: 0,
    };
    if (record) requests.push(entry);
    res.once('close', () => {
      inFlight--;
      entry.durationMs = Date.now() - started;
    });
    handle(req, res, entry, n, new URLSearchParams(q < 0 ? '' : url.slice(q + 1))).catch((err: unknown) => {
      const message = `Scripted model server error: ${err instanceof Error ? err.message : String(err)}`;
      entry.status = 500;
      entry.error = message;
      if (!res.headersSent) sendJson(res, 500, openAiError(message, 'server_error', null), `req_vera${n}`);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address, family } = server.address() as AddressInfo;
  const hostForUrl = family === 'IPv6' || address.includes(':') ? `[${address}]` : address;

  const origin = `http://${hostForUrl}:${port}`;
  // Runs of this process find it and send it their plans (engine/scripted-plan.ts).
  planSinksInProcess().set(origin, { set: (token, plan) => void plans.set(token, plan), drop: (token) => void plans.delete(token) });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      planSinksInProcess().delete(origin);
      server.close(() => resolve());
      server.closeAllConnections();
    }));

  const started: StartedModelServer = {
    url: `${origin}/v1`,
    origin,
    port,
    requests,
    stats: () => ({ requests: total, inFlight, maxInFlight }),
    close,
    [Symbol.asyncDispose]: close,
  };
  if (script) started.script = script;
  return started;
}
