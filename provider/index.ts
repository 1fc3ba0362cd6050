/** `vera-safety/provider`: model traffic hygiene — run-wide limits, retries, usage. */
export { startModelProxy, emptyStats, type ModelProxyOptions, type ProviderStats, type StartedModelProxy } from './model-proxy.js';
export { modelRoute, routeUrl, defaultOpenAIBaseURL, type ModelRoute } from './model-route.js';
export { RateLimiter, type RateLimits, type Grant } from './rate-limiter.js';
export { isRetryableStatus, retryAfterMs, retryDelayMs, DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
export { UsageReader, type TokenCount } from './usage.js';
