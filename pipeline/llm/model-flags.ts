import { isLocalModelURL, parseLocalModelURL, startLocalModel } from '../../provider/local-model/endpoint.js';
import { openAIJsonModel, type JsonModel, type ModelOptions } from './json-model.js';

/**
 * The model flags every pipeline command shares, for `node:util` parseArgs:
 *   --model <name>         default VERA_PIPELINE_MODEL, then VERA_MODEL, then gpt-4o-mini
 *   --base-url <url>       default OPENAI_BASE_URL (any OpenAI-compatible endpoint; `local:<name>`
 *                          serves a model `vera install-model` installed)
 *   --api-key-env <VAR>    the variable holding the key (default OPENAI_API_KEY)
 *   --temperature <t>      default 0
 *   --seed <n>             sent to the endpoint (sampling seed), when given
 *   --timeout <seconds>    how long a request may go without a byte of its reply (default 15;
 *                          300 for a local model, which reads a long prompt before it answers)
 *   --retries <n>          retries of a request that timed out, could not connect or got a
 *                          408/409/429/5xx (default 1; 0 for a local model)
 */
export const modelFlags = {
  model: { type: 'string' },
  'base-url': { type: 'string' },
  'api-key-env': { type: 'string' },
  temperature: { type: 'string' },
  'model-seed': { type: 'string' },
  timeout: { type: 'string' },
  retries: { type: 'string' },
} as const;

export const MODEL_FLAGS_USAGE =
  '[--model <name>] [--base-url <url>] [--api-key-env <VAR>] [--temperature <t>] [--model-seed <n>] [--timeout <seconds>] [--retries <n>]';

export function modelOptionsFrom(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): ModelOptions {
  const model = str(values.model) ?? env.VERA_PIPELINE_MODEL ?? env.VERA_MODEL ?? 'gpt-4o-mini';
  const baseURL = str(values['base-url']) ?? env.OPENAI_BASE_URL;
  const keyVar = str(values['api-key-env']);
  const apiKey = env[keyVar ?? 'OPENAI_API_KEY'];
  if (keyVar && !apiKey) throw new Error(`--api-key-env ${keyVar}: the variable ${keyVar} is not set`);
  if (!baseURL && !apiKey) {
    throw new Error('no model endpoint: set OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible provider), or pass --base-url <url>');
  }
  const options: ModelOptions = { model, apiKey: apiKey ?? 'no-key' };
  if (baseURL) options.baseURL = baseURL;
  const temperature = str(values.temperature);
  if (temperature !== undefined) options.temperature = number(temperature, '--temperature');
  const seed = str(values['model-seed']);
  if (seed !== undefined) options.seed = number(seed, '--model-seed');
  const timeout = str(values.timeout);
  if (timeout !== undefined) options.timeoutMs = number(timeout, '--timeout', { min: 0.1 }) * 1000;
  const retries = str(values.retries);
  if (retries !== undefined) options.maxRetries = number(retries, '--retries', { min: 0, integer: true });
  return options;
}

/** The longest reply a pipeline stage waits for from a local model (≈ 3 minutes at 8 tokens/s). */
export const LOCAL_MAX_TOKENS = 1536;

/** A local model's default idle timeout: on a CPU it reads a long prompt for a minute before its first token. */
export const LOCAL_TIMEOUT_MS = 300_000;

/** The pipeline's model, and what to close when the command ends (the local model server). */
export interface OpenedPipelineModel {
  model: JsonModel;
  close(): Promise<void>;
}

/**
 * The model a pipeline command asks: the endpoint the flags name, or — for `--base-url local:<name>`
 * — that packaged model, served on 127.0.0.1 for the length of the command. A small model on a CPU
 * reads a long prompt for a minute before its first token: its requests get a longer timeout, no retry, and a
 * token limit (LOCAL_MAX_TOKENS, `VERA_LOCAL_MAX_TOKENS`): a reply that long is a loop, not a draft.
 */
export async function openPipelineModel(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<OpenedPipelineModel> {
  const options = modelOptionsFrom(values, env);
  const url = options.baseURL;
  if (url === undefined || !isLocalModelURL(url)) return { model: openAIJsonModel(options), close: async () => {} };
  const { name } = parseLocalModelURL(url);
  const server = await startLocalModel(url);
  const model = str(values.model) ?? env.VERA_PIPELINE_MODEL ?? env.VERA_MODEL ?? name;
  const maxTokens = env.VERA_LOCAL_MAX_TOKENS ? number(env.VERA_LOCAL_MAX_TOKENS, 'VERA_LOCAL_MAX_TOKENS', { min: 16, integer: true }) : LOCAL_MAX_TOKENS;
  return {
    model: openAIJsonModel({ timeoutMs: LOCAL_TIMEOUT_MS, maxRetries: 0, ...options, model, baseURL: server.url, maxTokens }),
    close: () => server.close(),
  };
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** A numeric flag, or an error naming the flag. */
export function number(text: string, flag: string, { min = -Infinity, integer = false } = {}): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new Error(`${flag}: expected ${integer ? 'an integer' : 'a number'}${min > -Infinity ? ` ≥ ${min}` : ''}, got ${JSON.stringify(text)}`);
  }
  return n;
}
