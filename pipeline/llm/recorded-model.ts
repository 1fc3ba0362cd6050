import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { parseYaml, toYaml, writeFileAtomic } from '../yaml-file.js';
import { parseJsonReply, systemPromptFor, type JsonModel, type JsonReply, type JsonRequest } from './json-model.js';
import { VeraError } from '../../engine/errors.js';

/**
 * A JsonModel that answers from a checked-in file of replies, keyed by a hash of the request as
 * it would be sent (system prompt with its JSON Schema, user message). It exercises the real
 * prompts offline: CI replays the file; a changed prompt or schema is a different key, so it is a
 * miss that names the file and the request to refresh — never a silently stale answer.
 *
 * Modes (`VERA_MODEL_REPLIES`):
 *   replay  (default) — answer from the file; a miss throws `RecordedReplyMissing`;
 *   record  — a miss goes to a real endpoint (`upstream`) and its raw reply is stored;
 *   collect — a miss is stored with `reply: null` for a person to answer, then throws.
 * Every entry keeps the full request beside its reply, so a refresh is a readable diff.
 */

export const modelRepliesFile = z.strictObject({
  schema: z.literal('vera.model-replies/v1'),
  /** Where the replies came from: a model and endpoint, or who wrote them by hand. */
  source: z.string().min(1),
  replies: z.array(
    z.strictObject({
      key: z.string().regex(/^[0-9a-f]{16}$/),
      name: z.string(),
      system: z.string(),
      user: z.string(),
      reply: z.string().nullable(),
    }),
  ),
});
export type ModelRepliesFile = z.infer<typeof modelRepliesFile>;

export type RecordedMode = 'replay' | 'record' | 'collect';

export class RecordedReplyMissing extends VeraError {
  constructor(message: string) {
    super('RECORDED_REPLY_MISSING', message);
    this.name = 'RecordedReplyMissing';
  }
}

/** The request's key: what the endpoint would receive, hashed. */
export function requestKey(request: Pick<JsonRequest<unknown>, 'system' | 'user' | 'schema' | 'name'>): string {
  return createHash('sha256')
    .update(JSON.stringify([systemPromptFor(request), request.user]))
    .digest('hex')
    .slice(0, 16);
}

export interface RecordedModelOptions {
  file: string;
  mode?: RecordedMode;
  /** The real endpoint, in record mode. */
  upstream?: JsonModel;
  /** How to refresh, named in a miss (a command line). */
  refresh?: string;
  /** `source` of a new file (default: the upstream model in record mode). */
  source?: string;
}

export class RecordedJsonModel implements JsonModel {
  readonly model: string;
  private asked = 0;
  private readonly used = new Set<string>();
  private dirty = false;

  private constructor(
    private readonly data: ModelRepliesFile,
    private readonly options: RecordedModelOptions & { mode: RecordedMode },
  ) {
    this.model = options.upstream?.model ?? 'recorded';
  }

  static async open(options: RecordedModelOptions): Promise<RecordedJsonModel> {
    const mode = options.mode ?? modeFromEnv();
    if (mode === 'record' && !options.upstream) throw new Error('record mode needs an upstream model (a real endpoint)');
    let data: ModelRepliesFile;
    try {
      data = parseYaml(await readFile(options.file, 'utf8'), options.file, modelRepliesFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      data = { schema: 'vera.model-replies/v1', source: options.source ?? `recorded from ${options.upstream?.model ?? 'a model'}`, replies: [] };
    }
    return new RecordedJsonModel(data, { ...options, mode });
  }

  get requests(): number {
    return this.asked;
  }

  /** Entries no request of this session asked for (stale after a prompt change). */
  unused(): string[] {
    return this.data.replies.filter((r) => !this.used.has(r.key)).map((r) => `${r.name} (${r.key})`);
  }

  async ask<T>(request: JsonRequest<T>): Promise<JsonReply<T>> {
    this.asked++;
    const key = requestKey(request);
    const { name } = request;
    this.used.add(key);
    const entry = this.data.replies.find((r) => r.key === key);
    if (entry?.reply != null) return parseJsonReply(entry.reply, request.schema);
    if (this.options.mode === 'record') {
      const reply = await this.options.upstream!.ask(request);
      this.store({ key, name, system: systemPromptFor(request), user: request.user, reply: reply.raw });
      return reply;
    }
    if (this.options.mode === 'collect' && !entry) this.store({ key, name, system: systemPromptFor(request), user: request.user, reply: null });
    await this.save();
    const sameName = this.data.replies.filter((r) => r.name === name && r.key !== key).map((r) => r.key);
    throw new RecordedReplyMissing(
      `${this.options.file}: no recorded reply for a "${name}" request (key ${key})` +
        (sameName.length ? `; the file has "${name}" replies for other requests (${sameName.join(', ')}): the prompt, its schema or its input changed` : '') +
        (this.options.mode === 'collect' ? '; the request is now in the file with reply: null — write the reply there' : '') +
        (this.options.refresh ? `. Refresh with: ${this.options.refresh}` : ''),
    );
  }

  private store(entry: ModelRepliesFile['replies'][number]): void {
    const i = this.data.replies.findIndex((r) => r.key === entry.key);
    if (i >= 0) this.data.replies[i] = entry;
    else this.data.replies.push(entry);
    this.dirty = true;
  }

  /** Writes new or refreshed entries (record and collect modes); replay never writes. */
  async save(): Promise<void> {
    if (!this.dirty || this.options.mode === 'replay') return;
    await writeFileAtomic(
      this.options.file,
      toYaml(this.data, ' Model replies keyed by request (pipeline/llm/recorded-model.ts). A changed prompt is a new key: refresh, do not edit keys.'),
    );
    this.dirty = false;
  }
}

function modeFromEnv(env: NodeJS.ProcessEnv = process.env): RecordedMode {
  const mode = env.VERA_MODEL_REPLIES ?? 'replay';
  if (mode !== 'replay' && mode !== 'record' && mode !== 'collect')
    throw new Error(`VERA_MODEL_REPLIES: expected replay, record or collect, got ${JSON.stringify(mode)}`);
  return mode;
}
