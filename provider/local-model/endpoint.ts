import { localModelSpec } from './catalog.js';
import { startLocalModelServer, type LocalModelServerOptions, type StartedLocalModel } from './server.js';

/**
 * `local:<name>[?parallel=<n>&threads=<n>&context=<tokens>]` — the base URL that means "the packaged
 * model <name>, served on 127.0.0.1 by this process" (an agent's, the adversary's, the user's, or a
 * pipeline command's `--base-url`). One parser, so the plugin and the CLI read it the same way.
 */
export const LOCAL_MODEL_SCHEME = 'local:';

export function isLocalModelURL(url: string | undefined): boolean {
  return url?.startsWith(LOCAL_MODEL_SCHEME) ?? false;
}

export function parseLocalModelURL(url: string): LocalModelServerOptions {
  const [name = '', query = ''] = url.slice(LOCAL_MODEL_SCHEME.length).split('?');
  localModelSpec(name); // an unknown name fails here, listing the known ones
  const params = new URLSearchParams(query);
  const options: LocalModelServerOptions = { name };
  const count = (key: string, min: number, max: number): number | undefined => {
    const raw = params.get(key);
    if (raw === null) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${url}: ${key} must be an integer from ${min} to ${max}, not "${raw}"`);
    return n;
  };
  for (const key of params.keys())
    if (!['parallel', 'threads', 'context'].includes(key)) throw new Error(`${url}: unknown setting "${key}" (parallel, threads, context)`);
  const parallel = count('parallel', 1, 16);
  const threads = count('threads', 1, 256);
  const contextSize = count('context', 512, 131072);
  if (parallel !== undefined) options.parallel = parallel;
  if (threads !== undefined) options.threads = threads;
  if (contextSize !== undefined) options.contextSize = contextSize;
  return options;
}

/** Starts the server a `local:` URL names (the model loads once per process; see server.ts). */
export function startLocalModel(url: string, options: { dir?: string } = {}): Promise<StartedLocalModel> {
  return startLocalModelServer({ ...parseLocalModelURL(url), ...(options.dir ? { dir: options.dir } : {}) });
}
