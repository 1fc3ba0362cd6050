import OpenAI from 'openai';
import type { z } from 'zod';
import { formatField } from '../../engine/case-loader.js';

/**
 * The one way the pipeline talks to a model: a Chat Completions request that asks for a JSON
 * object, whose reply is parsed and validated with a zod schema. A reply that is not valid is a
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
}

export type JsonReply<T> = { ok: true; value: T; raw: string } | { ok: false; error: string; raw: string };

export interface JsonRequest<T> {
  system: string;
  user: string;
  schema: z.ZodType<T>;
  signal?: AbortSignal;
}

export interface JsonModel {
  readonly model: string;
  ask<T>(request: JsonRequest<T>): Promise<JsonReply<T>>;
  /** Requests made so far (for run summaries). */
  readonly requests: number;
}

export class ModelCallError extends Error {
  constructor(message: string) {
    super(message);
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
  return {
    model: options.model,
    get requests() {
      return requests;
    },
    async ask<T>(request: JsonRequest<T>): Promise<JsonReply<T>> {
      requests++;
      let raw: string;
      try {
        const completion = await client.chat.completions.create(
          {
            model: options.model,
            messages: [
              { role: 'system', content: request.system },
              { role: 'user', content: request.user },
            ],
            response_format: { type: 'json_object' },
            temperature: options.temperature ?? 0,
            ...(options.seed !== undefined ? { seed: options.seed } : {}),
          },
          request.signal ? { signal: request.signal } : undefined,
        );
        raw = completion.choices[0]?.message.content ?? '';
      } catch (error) {
        const where = options.baseURL ?? process.env.OPENAI_BASE_URL ?? 'the OpenAI API';
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
