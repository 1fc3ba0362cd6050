import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { gbnfFor } from './gbnf.js';
import { chatRequestSchema, prepareChat, toReply, type HistoryItem } from './chat-protocol.js';
import { installedModel, runtimeEntry } from './install.js';

/**
 * A packaged model served as an OpenAI-compatible Chat Completions endpoint on 127.0.0.1 —
 * `baseURL: 'local:<name>'` — through llama.cpp (node-llama-cpp, loaded from `.models/runtime`,
 * never a dependency of vera-safety). Tool calls and `response_format` json_schema are held to a JSON
 * grammar (chat-protocol.ts); streaming (SSE), usage counts and `GET /v1/models` as OpenAI's.
 *
 * What the machine sustains: generation is CPU-bound, so requests run `parallel` at a time (default
 * 1 on a machine with fewer than 4 cores, else 2), each on a context sequence of its own, the rest
 * queued in arrival order; llama.cpp gets `threads` (default: every core). A request goes to the
 * sequence that served its conversation last, so the shared prefix (the system prompt, the tool
 * list, the turns so far) is already evaluated and only the new tokens are read.
 */

export interface LocalModelServerOptions {
  name: string;
  /** Where `vera install-model` put it (default `.models`). */
  dir?: string;
  threads?: number;
  parallel?: number;
  /** Tokens per sequence (default 8192). */
  contextSize?: number;
}

export interface LocalModelStats {
  requests: number;
  /** Requests that had to wait for a slot, so far. */
  queued: number;
  /** Requests waiting now. */
  waiting: number;
  inputTokens: number;
  /** Input tokens a request did not evaluate again (its conversation's earlier turns, kept in its slot). */
  cachedTokens: number;
  outputTokens: number;
  /** Generation time, summed over requests. */
  generationMs: number;
  invalidReplies: number;
}

export interface StartedLocalModel {
  name: string;
  /** `http://127.0.0.1:<port>/v1` */
  url: string;
  origin: string;
  /** Requests it generates at once (the rest wait in arrival order). */
  slots: number;
  stats(): LocalModelStats;
  close(): Promise<void>;
}

/** The part of node-llama-cpp this server uses (it is loaded at run time, from the project's `.models/runtime`). */
interface Runtime {
  getLlama(options: Record<string, unknown>): Promise<Llama>;
  LlamaChat: new (options: { contextSequence: unknown }) => LlamaChat;
}
interface Llama {
  loadModel(options: { modelPath: string }): Promise<LlamaModel>;
  createGrammar(options: { grammar: string }): Promise<unknown>;
  dispose(): Promise<void>;
}
interface LlamaModel {
  createContext(options: Record<string, unknown>): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
interface LlamaContext {
  getSequence(): { tokenMeter: { usedInputTokens: number; usedOutputTokens: number } };
  dispose(): Promise<void>;
}
interface LlamaChat {
  readonly sequence: { tokenMeter: { usedInputTokens: number; usedOutputTokens: number }; readonly nextTokenIndex: number };
  generateResponse(
    history: Array<HistoryItem | { type: 'model'; response: string[] }>,
    options: Record<string, unknown>,
  ): Promise<{ response: string; metadata: { stopReason: string } }>;
}

interface Slot {
  chat: LlamaChat;
  busy: boolean;
  /** The conversation it served last (its first two messages, hashed). */
  conversation?: string;
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  runtime: Runtime;
}

const loading = new Map<string, Promise<Loaded>>();

async function loadRuntime(dir: string | undefined, name: string): Promise<Loaded & { file: string }> {
  const installed = await installedModel(name, dir);
  if (!installed) throw new Error(`the local model "${name}" is not installed: run \`npx vera install-model ${name}\` (it goes into ${dir ?? '.models'})`);
  const entry = runtimeEntry(dir);
  if (!entry) throw new Error(`the llama.cpp runtime is not installed: run \`npx vera install-model ${name}\``);
  const key = `${entry}\u0000${installed.file}`;
  let loaded = loading.get(key);
  if (!loaded) {
    loaded = (async () => {
      const runtime = (await import(pathToFileURL(entry).href)) as Runtime;
      // No GPU here; `build: never`: the prebuilt binary or nothing. Threads are set per context.
      const llama = await runtime.getLlama({ gpu: false, build: 'never', logLevel: 'error', progressLogs: false });
      const model = await llama.loadModel({ modelPath: installed.file });
      return { llama, model, runtime };
    })();
    loading.set(key, loaded);
    loaded.catch(() => loading.delete(key));
  }
  return { ...(await loaded), file: installed.file };
}

export async function startLocalModelServer(options: LocalModelServerOptions): Promise<StartedLocalModel> {
  const cores = availableParallelism();
  const parallel = options.parallel ?? (cores < 4 ? 1 : 2);
  const threads = options.threads ?? cores;
  const { llama, model, runtime } = await loadRuntime(options.dir, options.name);
  const context = await model.createContext({ contextSize: options.contextSize ?? 8192, sequences: parallel, threads });
  const slots: Slot[] = Array.from({ length: parallel }, () => ({ chat: new runtime.LlamaChat({ contextSequence: context.getSequence() }), busy: false }));
  const waiting: Array<{ conversation: string; grant: (slot: Slot) => void }> = [];
  const grammars = new Map<string, Promise<unknown>>();
  const stats: LocalModelStats = { requests: 0, queued: 0, waiting: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, generationMs: 0, invalidReplies: 0 };

  const acquire = (conversation: string): Promise<Slot> => {
    const free = slots.filter((s) => !s.busy);
    const slot = free.find((s) => s.conversation === conversation) ?? free[0];
    if (slot) {
      slot.busy = true;
      return Promise.resolve(slot);
    }
    stats.queued++;
    return new Promise((resolve) => waiting.push({ conversation, grant: resolve }));
  };
  const release = (slot: Slot) => {
    const index = waiting.findIndex((w) => w.conversation === slot.conversation);
    const next = waiting.splice(Math.max(index, 0), 1)[0];
    if (next) next.grant(slot);
    else slot.busy = false;
  };
  const grammarFor = (schema: Record<string, unknown>) => {
    const key = JSON.stringify(schema);
    let grammar = grammars.get(key);
    if (!grammar) {
      grammar = llama.createGrammar({ grammar: gbnfFor(schema) });
      grammars.set(key, grammar);
      grammar.catch(() => grammars.delete(key));
      if (grammars.size > 256) grammars.delete(grammars.keys().next().value!);
    }
    return grammar;
  };

  const complete = async (body: unknown, signal: AbortSignal) => {
    const request = chatRequestSchema.parse(body);
    const prepared = prepareChat(request);
    const conversation = createHash('sha256')
      .update(JSON.stringify(prepared.history.slice(0, 2)))
      .digest('hex');
    const grammar = prepared.schema ? await grammarFor(prepared.schema) : undefined;
    const slot = await acquire(conversation);
    try {
      slot.conversation = conversation;
      const meter = slot.chat.sequence.tokenMeter;
      const before = { input: meter.usedInputTokens, output: meter.usedOutputTokens };
      const started = performance.now();
      const result = await slot.chat.generateResponse([...prepared.history, { type: 'model', response: [] }], {
        ...(grammar ? { grammar } : {}),
        maxTokens: prepared.maxTokens,
        temperature: request.temperature ?? 0,
        ...(request.seed !== undefined ? { seed: request.seed } : {}),
        ...(request.top_p !== undefined ? { topP: request.top_p } : {}),
        signal,
        stopOnAbortSignal: true,
      });
      stats.generationMs += performance.now() - started;
      stats.requests++;
      // What the model read: the whole prompt (the sequence now holds it and the completion), of
      // which the part already in the sequence from this conversation's last turn was not evaluated again.
      const completion = meter.usedOutputTokens - before.output;
      const prompt = Math.max(slot.chat.sequence.nextTokenIndex - completion, meter.usedInputTokens - before.input);
      const usage = {
        prompt_tokens: prompt,
        completion_tokens: completion,
        prompt_tokens_details: { cached_tokens: Math.max(0, prompt - (meter.usedInputTokens - before.input)) },
      };
      stats.inputTokens += usage.prompt_tokens;
      stats.cachedTokens += usage.prompt_tokens_details.cached_tokens;
      stats.outputTokens += usage.completion_tokens;
      const reply = toReply(result.response, prepared, result.metadata.stopReason === 'maxTokens');
      if (prepared.schema && reply.finish_reason === 'length') stats.invalidReplies++;
      return { reply, usage: { ...usage, total_tokens: prompt + completion }, model: request.model ?? options.name };
    } finally {
      release(slot);
    }
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: Error) => send(res, 500, { error: { message: error.message, type: 'server_error' } }));
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0]!.replace(/\/+$/, '');
    if (req.method === 'GET' && path.endsWith('/models'))
      return send(res, 200, { object: 'list', data: [{ id: options.name, object: 'model', owned_by: 'local' }] });
    if (req.method !== 'POST' || !path.endsWith('/chat/completions'))
      return send(res, 404, {
        error: { message: `no such endpoint: ${req.method} ${path} (this local model serves POST /v1/chat/completions)`, type: 'invalid_request_error' },
      });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return send(res, 400, { error: { message: 'the request body is not JSON', type: 'invalid_request_error' } });
    }
    const parsed = chatRequestSchema.safeParse(body);
    if (!parsed.success)
      return send(res, 400, {
        error: { message: `invalid request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, type: 'invalid_request_error' },
      });
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const stream = parsed.data.stream === true;
    const hold = holdOpen(res, stream);
    let done: Awaited<ReturnType<typeof complete>>;
    try {
      done = await complete(parsed.data, abort.signal);
    } finally {
      hold.stop();
    }
    const { reply, usage, model: modelName } = done;
    const id = `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const created = Math.floor(Date.now() / 1000);
    const message = { role: 'assistant', content: reply.content, ...(reply.tool_calls ? { tool_calls: reply.tool_calls } : {}) };
    if (!stream) {
      return send(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: modelName,
        choices: [{ index: 0, message, finish_reason: reply.finish_reason }],
        usage,
      });
    }
    if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: modelName, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
      );
    chunk({ role: 'assistant', content: '' }, null);
    if (reply.tool_calls) chunk({ tool_calls: reply.tool_calls.map((c, index) => ({ index, ...c })) }, null);
    else for (const piece of (reply.content ?? '').match(/[\s\S]{1,64}/g) ?? []) chunk({ content: piece }, null);
    chunk({}, reply.finish_reason);
    if (parsed.data.stream_options?.include_usage)
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: modelName, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const origin = `http://127.0.0.1:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    name: options.name,
    origin,
    url: `${origin}/v1`,
    slots: parallel,
    stats: () => ({ ...stats, waiting: waiting.length }),
    close: () =>
      (closing ??= (async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await context.dispose();
      })()),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      data += c;
      if (data.length > 32 * 1024 * 1024) req.destroy(new Error('request body over 32 MiB'));
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };
/** How long a reply may take before the response is committed to 200 and kept alive. */
const HOLD_AFTER_MS = 20_000;

/**
 * A long generation (a case draft: minutes on a CPU) outlasts HTTP clients' header timeouts
 * (undici's, under Node's fetch and the openai package, is 300 s). Past HOLD_AFTER_MS the response
 * is committed to 200 and something is written every HOLD_AFTER_MS: a space before a JSON body
 * (JSON allows it), an SSE comment in a stream. A failure after that arrives as an error object in
 * the body (the status can no longer say it).
 */
function holdOpen(res: ServerResponse, stream: boolean): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const beat = () => {
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(200, stream ? SSE_HEADERS : { 'content-type': 'application/json' });
    res.write(stream ? ': generating\n\n' : ' ');
    timer = setTimeout(beat, HOLD_AFTER_MS);
  };
  timer = setTimeout(beat, HOLD_AFTER_MS);
  return { stop: () => clearTimeout(timer) };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    // Committed by holdOpen: the body carries it (as JSON, or as a stream's last event).
    const sse = String(res.getHeader('content-type')).startsWith('text/event-stream');
    return void res.end(sse ? `data: ${JSON.stringify(body)}\n\n` : JSON.stringify(body));
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
