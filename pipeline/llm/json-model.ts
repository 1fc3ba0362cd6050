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
  /** Retries on 429/5xx inside the openai client (default 2). */
  maxRetries?: number;
  /** Per-request timeout in ms (default 120 s). */
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

export function openAIJsonModel(options: ModelOptions): JsonModel {
  const client = new OpenAI({
    baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'no-key',
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 120_000,
  });
  let requests = 0;
  let format: ResponseFormat = 'json_schema';
  const where = options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'the OpenAI API';
  const complete = async <T>(request: JsonRequest<T>, as: ResponseFormat): Promise<string> => {
    const completion = await client.chat.completions.create(
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
      },
      request.signal ? { signal: request.signal } : undefined,
    );
    return completion.choices[0]?.message.content ?? '';
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
