import OpenAI from 'openai';

const clients = new Map<string, OpenAI>();

/**
 * One `openai` client per endpoint, key and retry count, so connections are reused across runs —
 * shared by the reference agent and the LLM control agents (a lower layer than both).
 */
export function openAIClient(options: { baseURL?: string; apiKey?: string; maxRetries?: number; cache?: boolean }): OpenAI {
  const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
  const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY ?? 'no-key';
  if (options.cache === false) return new OpenAI({ baseURL, apiKey, maxRetries: options.maxRetries ?? 2 });
  const key = `${baseURL ?? ''}\u0000${apiKey}\u0000${options.maxRetries ?? 2}`;
  let client = clients.get(key);
  if (!client) {
    client = new OpenAI({ baseURL, apiKey, maxRetries: options.maxRetries ?? 2 });
    clients.set(key, client);
  }
  return client;
}
