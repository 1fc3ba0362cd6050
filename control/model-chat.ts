import type OpenAI from 'openai';
import type { z } from 'zod';
import { openAIClient } from '../provider/openai-client.js';
import { defaultOpenAIBaseURL } from '../provider/model-route.js';
import { rejectsJsonSchema, responseFormatFor } from '../provider/response-format.js';
import { ControlError, type ControlChatMessage, type ControlModelRequest, type ControlModelResponse } from './control.js';

/** How an LLM-driven control agent reaches its model. */
export interface ControlModelOptions {
  model: string;
  /** OpenAI-compatible endpoint (default OPENAI_BASE_URL, then the OpenAI API). */
  baseURL?: string;
  /** Default OPENAI_API_KEY. */
  apiKey?: string;
  temperature?: number;
  /** Retries of the same request on 429/5xx inside the openai client (default 2). Never another model. */
  maxRetries?: number;
}

export interface ControlChatOptions {
  model: ControlModelOptions;
  /** The run's seed, sent with every request. */
  seed: number;
  signal: AbortSignal;
  /** Who is talking (`adversary`, `user`), for error messages. */
  role: string;
  /** The run's model proxy, when there is one. */
  route?: (upstream: string) => string;
  /** The reply contract: asked for as `response_format: json_schema` (generated from the zod schema). */
  reply?: { name: string; schema: z.ZodType };
}

/**
 * One control agent's conversation with its model: keeps the history, sends the run's seed and
 * asks for structured output — the reply's JSON Schema when it has one, else a JSON object; an
 * endpoint that refuses `json_schema` is asked with `json_object` from then on. A failed request
 * is a `ControlError` — there is no fallback to another model or service, so a run never
 * silently tests with a different adversary than configured.
 */
export class ControlModelChat {
  private readonly history: ControlChatMessage[] = [];
  private readonly client: OpenAI;
  private readonly options: ControlModelOptions;
  private readonly seed: number;
  private readonly signal: AbortSignal;
  private readonly role: string;
  private readonly reply: ControlChatOptions['reply'];
  private jsonSchema: boolean;

  constructor({ model: options, seed, signal, role, route, reply }: ControlChatOptions) {
    this.options = options;
    this.seed = seed;
    this.signal = signal;
    this.role = role;
    this.reply = reply;
    this.jsonSchema = reply !== undefined;
    // Through the run's model proxy when there is one: it retries, so the client does not.
    const baseURL = route ? route(defaultOpenAIBaseURL(options.baseURL)) : options.baseURL;
    this.client = openAIClient({
      ...(baseURL ? { baseURL } : {}),
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      maxRetries: options.maxRetries ?? (route ? 0 : 2),
      // A routed URL is this run's own: caching its client would keep one per run forever.
      cache: !route,
    });
  }

  /** Appends `added` to the conversation, asks the model, and returns what went out and came back. */
  async ask(added: ControlChatMessage[]): Promise<{ request: ControlModelRequest; response: ControlModelResponse }> {
    this.history.push(...added);
    const request: ControlModelRequest = {
      model: this.options.model,
      seed: this.seed,
      ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
      messages: added,
      totalMessages: this.history.length,
    };
    let response: ControlModelResponse;
    const complete = () =>
      this.client.chat.completions.create(
        {
          model: this.options.model,
          messages: [...this.history],
          seed: this.seed,
          response_format: this.jsonSchema && this.reply ? responseFormatFor(this.reply.name, this.reply.schema) : { type: 'json_object' },
          ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
        },
        { signal: this.signal },
      );
    try {
      let completion;
      try {
        completion = await complete();
      } catch (error) {
        if (!this.jsonSchema || !rejectsJsonSchema(error)) throw error;
        this.jsonSchema = false;
        completion = await complete();
      }
      const choice = completion.choices[0];
      response = {
        content: choice?.message.content ?? '',
        ...(choice?.finish_reason ? { finishReason: choice.finish_reason } : {}),
        ...(completion.usage ? { usage: { input: completion.usage.prompt_tokens, output: completion.usage.completion_tokens } } : {}),
      };
    } catch (error) {
      throw new ControlError(`${this.role} model ${this.options.model} failed: ${(error as Error).message}`);
    }
    this.history.push({ role: 'assistant', content: response.content });
    return { request, response };
  }
}

/** The first JSON object in a model reply, or `undefined` when there is none. */
export function parseJsonObject(content: string): Record<string, unknown> | undefined {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  try {
    const value: unknown = JSON.parse(start >= 0 && end > start ? content.slice(start, end + 1) : content);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
