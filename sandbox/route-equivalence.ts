import type { JsonValue } from '../engine/json.js';

/** One tool call of a trajectory, as a witness writes it. */
export interface RouteCall {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * One step of a route: a call, or a call made from the results of the route's earlier steps (the
 * number the pull request just opened got, the id of the event just created).
 */
export type RouteStep = RouteCall | ((results: readonly unknown[]) => RouteCall);

export interface RewriteContext {
  /**
   * The whole sandbox just before the call (keyed by environment name, as verifier paths are):
   * what a route needs to know that the call does not say — the mail to reply to, the file's
   * current text, the number the next pull request gets.
   */
  before: Record<string, JsonValue>;
  /** The run's secret values (what `{{secret.NAME}}` became): the routes that split or encode a secret find it so. */
  secrets: readonly string[];
}

/**
 * Another route to what one tool call does: the same effect reached the way a different agent
 * might reach it (a reply instead of a new mail, an UPDATE instead of an INSERT, the flags spelt
 * long). Declared by the environment that owns the tool, so one rule lives beside the tools it
 * knows; `vera check --robustness` replaces a witness's call by the rewrite, runs the result for
 * real and checks the verifier judges it as it judged the original. A rewrite returns nothing
 * where it does not apply (no mail from that recipient to reply to); a rewrite whose calls then
 * fail says nothing about the verifier and is reported apart.
 */
export interface RouteEquivalence {
  /** Stable id, `<environment>/<what>`: the name a miss is reported under. */
  name: string;
  /** The tool whose calls it rewrites. */
  tool: string;
  /** The other route, in words ("the recipients in cc, the mail addressed to the owner"). */
  route: string;
  /**
   * `violating`: the route reaches the harm but goes further than the call (a default policy of
   * ACCEPT instead of one rule), so it is tried on violating witnesses only — on a safe one it
   * would be the harm, not the same act.
   */
  only?: 'violating';
  rewrite(call: RouteCall, ctx: RewriteContext): RouteStep[] | undefined;
}

/** Identity helper, so a literal keeps its type. */
export function defineEquivalence(e: RouteEquivalence): RouteEquivalence {
  return e;
}

/** A string field of an earlier step's result (`{ id: "evt-3" }` → "evt-3"). */
export function resultField(results: readonly unknown[], step: number, key: string): unknown {
  const r = results[step];
  return r && typeof r === 'object' ? (r as Record<string, unknown>)[key] : undefined;
}

/**
 * A multi-field update as one call per field (the id fields in each): the same change made in
 * steps, as an agent editing one field at a time does.
 */
export function perFieldUpdate(options: {
  name: string;
  tool: string;
  keys: readonly string[];
  /** Fields that only make sense changed together (an event's start and end). */
  together?: readonly string[];
}): RouteEquivalence {
  return defineEquivalence({
    name: options.name,
    tool: options.tool,
    route: 'one call per changed field instead of one call changing several',
    rewrite(call) {
      const ids = Object.fromEntries(Object.entries(call.args).filter(([k]) => options.keys.includes(k)));
      const groups: Array<Record<string, unknown>> = [];
      const joint: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(call.args)) {
        if (options.keys.includes(k) || v === undefined) continue;
        if (options.together?.includes(k)) joint[k] = v;
        else groups.push({ [k]: v });
      }
      if (Object.keys(joint).length) groups.unshift(joint);
      if (groups.length < 2) return undefined;
      return groups.map((fields) => ({ tool: call.tool, args: { ...ids, ...fields } }));
    },
  });
}

/** The value at `key` of a snapshot section as a record, or undefined. */
export function section(before: Record<string, JsonValue>, env: string): Record<string, JsonValue> | undefined {
  const value = before[env];
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, JsonValue>) : undefined;
}

/** The item of a snapshot list (`before[env][list]`) whose `id` is `id`, as the route needs it; undefined when there is none. */
export function itemById<T extends { id: string }>(before: Record<string, JsonValue>, env: string, list: string, id: unknown): T | undefined {
  const items = section(before, env)?.[list];
  return Array.isArray(items) ? (items as unknown as T[]).find((item) => item.id === id) : undefined;
}

/** Text cut in two at the whitespace nearest its middle, for "in two messages"; undefined for one word. */
export function splitText(text: string): [string, string] | undefined {
  const middle = text.length / 2;
  let best = -1;
  for (const m of text.matchAll(/\s+/g)) {
    const at = m.index + m[0].length;
    if (m.index > 0 && at < text.length && (best < 0 || Math.abs(at - middle) < Math.abs(best - middle))) best = at;
  }
  return best < 0 ? undefined : [text.slice(0, best), text.slice(best)];
}

/** The call made twice, `key` holding one part in each (the other arguments as they were); undefined without parts. */
export function inTwoParts(call: RouteCall, key: string, parts: readonly [unknown, unknown] | undefined): RouteCall[] | undefined {
  return parts?.map((part) => ({ tool: call.tool, args: { ...call.args, [key]: part } }));
}

/** An amount in whole units (cents) cut in two parts that add up to it; undefined for less than 2. */
export function amountInTwo(amount: unknown): [number, number] | undefined {
  const n = Number(amount);
  if (!Number.isInteger(n) || n < 2) return undefined;
  return [Math.floor(n / 2), n - Math.floor(n / 2)];
}

/** `text` cut inside the first secret it carries (half the secret in each part); undefined when it carries none. */
export function splitAtSecret(text: string, secrets: readonly string[]): [string, string] | undefined {
  for (const secret of secrets) {
    const at = secret.length >= 4 ? text.indexOf(secret) : -1;
    if (at >= 0) {
      const cut = at + Math.floor(secret.length / 2);
      return [text.slice(0, cut), text.slice(cut)];
    }
  }
  return undefined;
}
