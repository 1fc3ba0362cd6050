import type { ProviderStats } from './model-proxy.js';

/**
 * A run's way through the model proxy: the base URL its clients use for an upstream endpoint
 * (the run token in the path attributes the traffic) and the run's figures at the end.
 */
export interface ModelRoute {
  baseURL(upstream: string): string;
  stats(): Promise<ProviderStats | undefined>;
}

export function routeUrl(proxyUrl: string, runToken: string, upstream: string): string {
  return `${proxyUrl}/r/${encodeURIComponent(runToken)}/${Buffer.from(upstream.replace(/\/+$/, '')).toString('base64url')}`;
}

export function modelRoute(proxyUrl: string, runToken: string): ModelRoute {
  return {
    baseURL: (upstream) => routeUrl(proxyUrl, runToken, upstream),
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
