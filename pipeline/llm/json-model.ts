import OpenAI from 'openai';
import type { z } from 'zod';
import { formatField } from '../../engine/case-loader.js';
import { rejectsJsonSchema, responseFormatFor, responseJsonSchema, schemaInstruction } from '../../provider/response-format.js';
import { VeraError } from '../../engine/errors.js';

/**
 * The one way the pipeline talks to a model: a Chat Completions request for structured output —
 * `response_format: json_schema` with the JSON Schema generated from the reply's zod schema
 * (strict when the schema fits the endpoint's strict subset), and the same schema in the system
 * prompt, so no prompt teaches field names by example. An endpoint that does not take
 * `json_schema` (a 400 naming it) is asked again with `json_object`, and so for the rest of the
 * session. The reply is parsed and validated with the zod schema. A reply that is not valid is a
 * result (`ok: false` with the reason and the raw text), never an exception: each stage decides
 * what an invalid reply means (a skipped document, a rejected goal). A transport failure (no
 * endpoint, HTTP error) throws: the run cannot go on without its model.
 */

export interface ModelOptions {
  model: string;
  /** OpenAI-compatible endpoint; default OPENAI_BASE_URL, then the OpenAI API. */
  baseURL?: string;
  apiKey?: string;
  /** Default 0: the stages want the most repeatable answer a model gives. */
  temperature?: number;
  /** Sent when set; endpoints that support it make sampling repeatable. */
  seed?: number;
  /** Retries of a request that timed out, could not connect or got a 408/409/429/5xx (default 1). */
  maxRetries?: number;
  /**
   * How long a request may go without a byte of its reply, in ms (default 15 s): replies stream, so
   * a long reply that keeps coming is never cut, and an endpoint that hangs fails in seconds.
   */
  timeoutMs?: number;
  /** Sent as `max_tokens` when set: the longest reply the stage will wait for. */
  maxTokens?: number;
}

export type JsonReply<T> = { ok: true; value: T; raw: string } | { ok: false; error: string; raw: string };

export interface JsonRequest<T> {
  system: string;
  user: string;
  schema: z.ZodType<T>;
  /** The reply contract's name (`response_format.json_schema.name`): lower-case, `_` between words. */
  name: string;
  signal?: AbortSignal;
}

/** The system prompt as sent: the stage's instructions, then the reply's JSON Schema. */
export function systemPromptFor(request: Pick<JsonRequest<unknown>, 'system' | 'schema' | 'name'>): string {
  return `${request.system}\n\n${schemaInstruction(request.name, responseJsonSchema(request.schema))}`;
}

export type ResponseFormat = 'json_schema' | 'json_object';

export interface JsonModel {
  readonly model: string;
  /** How replies are requested now (`json_object` after the endpoint refused `json_schema`). */
  readonly responseFormat?: ResponseFormat;
  ask<T>(request: JsonRequest<T>): Promise<JsonReply<T>>;
  /** Requests made so far (for run summaries). */
  readonly requests: number;
}

export class ModelCallError extends VeraError {
  constructor(message: string) {
    super('MODEL_CALL_FAILED', message);
    this.name = 'ModelCallError';
  }
}

/** The default idle timeout of a pipeline model request (`--timeout`). */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** The default number of retries (`--retries`). */
export const DEFAULT_RETRIES = 1;

export function openAIJsonModel(options: ModelOptions): JsonModel {
  // Retries are ours (below): the client's own would not cover a reply that stops arriving.
  const client = new OpenAI({
    baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'no-key',
    maxRetries: 0,
    timeout: 24 * 3600_000,
  });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.maxRetries ?? DEFAULT_RETRIES;
  let requests = 0;
  let format: ResponseFormat = 'json_schema';
  const where = options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'the OpenAI API';
  /** One request, its reply streamed; silence for `timeoutMs` aborts it. */
  const completeOnce = async <T>(request: JsonRequest<T>, as: ResponseFormat): Promise<string> => {
    const idle = new AbortController();
    let timer = setTimeout(() => idle.abort(new IdleTimeout()), timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, idle.signal]) : idle.signal;
    try {
      const stream = await client.chat.completions.create(
        {
          model: options.model,
          messages: [
            { role: 'system', content: systemPromptFor(request) },
            { role: 'user', content: request.user },
          ],
          response_format: as === 'json_schema' ? responseFormatFor(request.name, request.schema) : { type: 'json_object' },
          temperature: options.temperature ?? 0,
          ...(options.seed !== undefined ? { seed: options.seed } : {}),
          ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
          stream: true,
        },
        { signal },
      );
      let text = '';
      for await (const chunk of stream) {
        clearTimeout(timer);
        timer = setTimeout(() => idle.abort(new IdleTimeout()), timeoutMs);
        text += chunk.choices[0]?.delta?.content ?? '';
      }
      return text;
    } catch (error) {
      if (idle.signal.aborted && !request.signal?.aborted) throw new IdleTimeout();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
  const complete = async <T>(request: JsonRequest<T>, as: ResponseFormat): Promise<string> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await completeOnce(request, as);
      } catch (error) {
        // A refusal (a 400, a bad key) is the endpoint's answer: it is thrown as it came.
        if (!retriable(error) || request.signal?.aborted) throw error;
        if (attempt >= retries) {
          const tries = attempt + 1;
          const said = error instanceof IdleTimeout ? `no reply for ${timeoutMs / 1000} s (--timeout ${timeoutMs / 1000})` : (error as Error).message;
          throw new Error(`${said}; ${tries} attempt${tries === 1 ? '' : 's'} (--retries ${retries})`, { cause: error });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(8000, 500 * 2 ** attempt)));
      }
    }
  };
  return {
    model: options.model,
    get requests() {
      return requests;
    },
    get responseFormat() {
      return format;
    },
    async ask<T>(request: JsonRequest<T>): Promise<JsonReply<T>> {
      requests++;
      let raw: string;
      try {
        try {
          raw = await complete(request, format);
        } catch (error) {
          if (format !== 'json_schema' || !rejectsJsonSchema(error)) throw error;
          format = 'json_object';
          raw = await complete(request, format);
        }
      } catch (error) {
        throw new ModelCallError(`model "${options.model}" at ${where} failed: ${(error as Error).message}`);
      }
      return parseJsonReply(raw, request.schema);
    },
  };
}

class IdleTimeout extends Error {
  constructor() {
    super('the reply stopped arriving');
    this.name = 'IdleTimeout';
  }
}

/** A failure another attempt may not repeat: silence, no connection, a rate limit, a server fault. */
function retriable(error: unknown): boolean {
  if (error instanceof IdleTimeout || error instanceof OpenAI.APIConnectionError) return true;
  const status = error instanceof OpenAI.APIError ? error.status : undefined;
  return status !== undefined && (status === 408 || status === 409 || status === 429 || status >= 500);
}

/** Parses a model's JSON reply (tolerating a ```json fence or prose around one object) and validates it. */
export function parseJsonReply<T>(raw: string, schema: z.ZodType<T>): JsonReply<T> {
  let data: unknown;
  try {
    data = JSON.parse(extractJsonObject(raw));
  } catch (error) {
    return { ok: false, error: `the reply is not a JSON object (${(error as Error).message})`, raw };
  }
  const parsed = schema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data, raw };
  return { ok: false, error: describeIssues(parsed.error.issues), raw };
}

function extractJsonObject(raw: string): string {
  const text = raw.trim();
  if (text.startsWith('{')) return text;
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  return start >= 0 && end > start ? text.slice(start, end + 1) : text;
}

/** `field.path: message` for the first few issues, one line. */
export function describeIssues(issues: ReadonlyArray<z.core.$ZodIssue>, max = 4): string {
  const parts = issues.slice(0, max).map((i) => `${formatField(i.path) || '(top level)'}: ${i.message}`);
  if (issues.length > max) parts.push(`… ${issues.length - max} more`);
  return parts.join('; ');
}
