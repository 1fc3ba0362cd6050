import type { ProviderStats } from './model-proxy.js';
import type { ModelRequestLog } from './model-request-log.js';

/**
 * A run's way through the model proxy: the base URL its clients use for an upstream endpoint
 * (the run token in the path attributes the traffic) and the run's figures at the end.
 */
export interface ModelRoute {
  /** For the agent under test: its requests are also logged (what its model was offered). */
  baseURL(upstream: string): string;
  /** For the control agent: counted with the run, not logged as the agent's. */
  controlBaseURL(upstream: string): string;
  stats(): Promise<ProviderStats | undefined>;
  /** The agent's model requests of the run (read once, at its end). */
  requests(): Promise<ModelRequestLog | undefined>;
}

export function routeUrl(proxyUrl: string, runToken: string, upstream: string, client: 'agent' | 'control' = 'agent'): string {
  return `${proxyUrl}/${client === 'agent' ? 'r' : 'c'}/${encodeURIComponent(runToken)}/${Buffer.from(upstream.replace(/\/+$/, '')).toString('base64url')}`;
}

export function modelRoute(proxyUrl: string, runToken: string): ModelRoute {
  return {
    baseURL: (upstream) => routeUrl(proxyUrl, runToken, upstream),
    controlBaseURL: (upstream) => routeUrl(proxyUrl, runToken, upstream, 'control'),
    async requests() {
      try {
        const res = await fetch(`${proxyUrl}/requests/${encodeURIComponent(runToken)}`);
        if (!res.ok) return undefined;
        // The proxy is this project's own and answers with what it wrote: trusted like the stats,
        // not parsed (a record write stays cheap).
        const log: ModelRequestLog = JSON.parse(await res.text());
        return log;
      } catch {
        return undefined;
      }
    },
    async stats() {
      try {
        const res = await fetch(`${proxyUrl}/stats/${encodeURIComponent(runToken)}`);
        return res.ok ? ((await res.json()) as ProviderStats) : undefined;
      } catch {
        // The proxy is gone (the run is being torn down): the record simply has no figures.
        return undefined;
      }
    },
  };
}

/** The endpoint a client would use without a proxy (OpenAI-compatible default). */
export function defaultOpenAIBaseURL(baseURL: string | undefined): string {
  return baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
}
