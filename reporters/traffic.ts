import type { ProviderStats } from '../provider/model-proxy.js';

/** USD per million tokens, by model name (as in the requests). */
export type PriceTable = Record<string, { input: number; output: number }>;

/** Model traffic and tokens over a set of runs, with cost when a price table is given. */
export interface TrafficSummary {
  runs: number;
  requests: number;
  retries: number;
  rateLimited: number;
  transientErrors: number;
  waitedMs: number;
  tokens: { input: number; output: number };
  byModel: Record<string, { requests: number; input: number; output: number; costUsd?: number }>;
  /** Present when every model that was used has a price. */
  costUsd?: number;
  /** Models used that the price table does not name. */
  unpriced: string[];
}

export function summarizeTraffic(runs: Iterable<{ usage?: { input: number; output: number }; provider?: ProviderStats }>, prices?: PriceTable): TrafficSummary {
  const s: TrafficSummary = {
    runs: 0,
    requests: 0,
    retries: 0,
    rateLimited: 0,
    transientErrors: 0,
    waitedMs: 0,
    tokens: { input: 0, output: 0 },
    byModel: {},
    unpriced: [],
  };
  for (const run of runs) {
    s.runs++;
    const usage = run.provider?.usage ?? run.usage;
    if (usage) {
      s.tokens.input += usage.input;
      s.tokens.output += usage.output;
    }
    const p = run.provider;
    if (!p) continue;
    s.requests += p.requests;
    s.retries += p.retries;
    s.rateLimited += p.rateLimited;
    s.transientErrors += p.transientErrors;
    s.waitedMs += p.waitedMs;
    for (const [model, m] of Object.entries(p.byModel)) {
      const into = (s.byModel[model] ??= { requests: 0, input: 0, output: 0 });
      into.requests += m.requests;
      into.input += m.input;
      into.output += m.output;
    }
  }
  if (prices) {
    let total = 0;
    for (const [model, m] of Object.entries(s.byModel)) {
      const price = prices[model];
      if (!price) {
        s.unpriced.push(model);
        continue;
      }
      m.costUsd = (m.input * price.input + m.output * price.output) / 1_000_000;
      total += m.costUsd;
    }
    if (Object.keys(s.byModel).length > 0 && s.unpriced.length === 0) s.costUsd = total;
  }
  return s;
}

function compact(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n);
}

/** One line for the terminal, e.g. `model traffic: 312 requests, 4 retries (3 rate-limited), waited 2.1 s; tokens 123k in / 45k out; cost $0.42`. */
export function renderTraffic(s: TrafficSummary): string | undefined {
  if (s.requests === 0 && s.tokens.input + s.tokens.output === 0) return undefined;
  const parts: string[] = [];
  if (s.requests > 0) {
    const retries = s.retries ? `, ${s.retries} retr${s.retries === 1 ? 'y' : 'ies'}${s.rateLimited ? ` (${s.rateLimited} rate-limited)` : ''}` : '';
    parts.push(`${s.requests} model requests${retries}${s.waitedMs >= 100 ? `, waited ${(s.waitedMs / 1000).toFixed(1)} s for limits and retries` : ''}`);
  }
  parts.push(`tokens ${compact(s.tokens.input)} in / ${compact(s.tokens.output)} out`);
  if (s.costUsd !== undefined) parts.push(`cost $${s.costUsd.toFixed(s.costUsd < 1 ? 4 : 2)}`);
  else if (s.unpriced.length) parts.push(`no price for ${s.unpriced.join(', ')}`);
  return ` model traffic: ${parts.join('; ')}`;
}
