/**
 * Scripts: a fixed list of replies, one per model request, each optionally guarded by checks on
 * the request. Wire-independent, so every wire protocol of the scripted server reuses it.
 */
import type { Conversation, ModelPolicy, ModelReply } from './conversation.js';
import { lastUserIndex, resolveToolName } from './directives.js';
import { VeraError } from '../engine/errors.js';

/** A regular expression in JSON-friendly form (`source`, optional `flags`). */
export interface ScriptPattern {
  matches: string;
  flags?: string;
}

export interface ScriptExpect {
  /** The last user message contains this text, or matches this pattern. */
  lastUser?: string | ScriptPattern | RegExp;
  /** The last tool result in the conversation contains this text. */
  lastToolResult?: string;
  /** The request offers all of these tools (exact name or namespaced, e.g. `mcp__vera__x`). */
  tools?: string[];
}

export interface ScriptStep {
  expect?: ScriptExpect;
  /** The model's answer; or, with `error`, the HTTP error a provider would send instead. */
  reply?: ModelReply;
  /** Answer with this HTTP status (e.g. 429 with `retry-after`) instead of a reply. */
  error?: { status: number; headers?: Record<string, string>; message?: string };
}

/**
 * Thrown by a policy to make the server answer with an HTTP error, as a provider would: a rate
 * limit (429 with Retry-After), an overload (503, 529), a server fault (500).
 */
export class ScriptedHttpError extends VeraError {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string> = {},
    message = `scripted HTTP ${status}`,
  ) {
    super('SCRIPTED_HTTP', message);
    this.name = 'ScriptedHttpError';
  }
}

/** Thrown (and turned into an HTTP 500 by the server) when a request does not fit the script. */
export class ScriptMismatchError extends VeraError {
  constructor(
    message: string,
    /** 1-based step number, or the request number when the script is exhausted. */
    readonly step: number,
  ) {
    super('SCRIPT_MISMATCH', message);
    this.name = 'ScriptMismatchError';
  }
}

/** A script as a policy; also reports how far it got. */
export interface ScriptPolicy extends ModelPolicy {
  /** Steps consumed so far (one per request, mismatches included). */
  readonly consumed: number;
  /** Steps not yet consumed. */
  readonly remaining: number;
}

function preview(text: string, max = 120): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine);
}

/** The last tool result, or the last real user message (agent-added context skipped). */
function lastOf(conversation: Conversation, role: 'user' | 'tool'): string | undefined {
  if (role === 'user') return conversation.messages[lastUserIndex(conversation.messages)]?.text;
  for (let i = conversation.messages.length - 1; i >= 0; i--) {
    const m = conversation.messages[i]!;
    if (m.role === role) return m.text;
  }
  return undefined;
}

function toRegExp(pattern: ScriptPattern | RegExp): RegExp {
  return pattern instanceof RegExp ? pattern : new RegExp(pattern.matches, pattern.flags);
}

/** Why `conversation` does not satisfy `expect`, or `undefined` when it does. */
export function checkExpectation(expect: ScriptExpect | undefined, conversation: Conversation): string | undefined {
  if (!expect) return undefined;
  if (expect.lastUser !== undefined) {
    const text = lastOf(conversation, 'user');
    if (text === undefined) return 'expected a user message but the request has none';
    if (typeof expect.lastUser === 'string') {
      if (!text.includes(expect.lastUser)) {
        return `expected the last user message to contain ${JSON.stringify(expect.lastUser)} but it was ${preview(text)}`;
      }
    } else {
      const re = toRegExp(expect.lastUser);
      if (!re.test(text)) return `expected the last user message to match /${re.source}/${re.flags} but it was ${preview(text)}`;
    }
  }
  if (expect.lastToolResult !== undefined) {
    const text = lastOf(conversation, 'tool');
    if (text === undefined) {
      return `expected a tool result containing ${JSON.stringify(expect.lastToolResult)} but the request has no tool result`;
    }
    if (!text.includes(expect.lastToolResult)) {
      return `expected the last tool result to contain ${JSON.stringify(expect.lastToolResult)} but it was ${preview(text)}`;
    }
  }
  if (expect.tools) {
    const missing = expect.tools.filter((t) => resolveToolName(t, conversation.tools) === undefined);
    if (missing.length > 0) {
      const offered = conversation.tools.map((t) => t.name).join(', ') || 'none';
      return `expected the request to offer tools [${missing.join(', ')}] but it offered [${offered}]`;
    }
  }
  return undefined;
}

/**
 * Turns a script into a policy. Steps are consumed in order, one per request; a request that
 * does not meet its step's `expect`, or arrives after the last step, throws ScriptMismatchError.
 */
export function scriptPolicy(steps: readonly ScriptStep[]): ScriptPolicy {
  let next = 0;
  const policy = (conversation: Conversation): ModelReply => {
    const index = next++;
    const step = steps[index];
    if (!step) {
      throw new ScriptMismatchError(
        `Script exhausted: request ${index + 1} arrived but the script has only ${steps.length} step(s)` +
          ` (last user message: ${preview(lastOf(conversation, 'user') ?? '')})`,
        index + 1,
      );
    }
    const problem = checkExpectation(step.expect, conversation);
    if (problem) {
      throw new ScriptMismatchError(`Script step ${index + 1} of ${steps.length} did not match: ${problem}`, index + 1);
    }
    if (step.error) throw new ScriptedHttpError(step.error.status, step.error.headers, step.error.message);
    if (!step.reply) throw new ScriptMismatchError(`step ${index + 1} has neither reply nor error`, index + 1);
    return step.reply;
  };
  Object.defineProperties(policy, {
    consumed: { get: () => Math.min(next, steps.length), enumerable: true },
    remaining: { get: () => Math.max(steps.length - next, 0), enumerable: true },
  });
  return policy as ScriptPolicy;
}
