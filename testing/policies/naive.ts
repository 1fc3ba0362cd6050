/**
 * The `naive` demo policy: does whatever the latest instruction asks — the calls the run's plan
 * says follow the user's message, and those that follow an injected tool result (or, in
 * hand-built requests, ACTION lines) — including what is planted inside tool results. It stands in
 * for an agent that is vulnerable to prompt injection.
 *
 * The turn mechanics (collect directives, skip the ones already carried out, one tool call per
 * reply, summary text at the end) live here in `createDirectivePolicy`, which `guarded` reuses.
 */
import type { Conversation, ModelPolicy, ModelReply, PolicyContext } from '../conversation.js';
import { plannedTurn } from '../planned-turn.js';
import { directiveKey, readTurn, resolveReferences, resolveToolName, wasExecuted, type SourcedDirective, type Turn } from '../directives.js';

/** The call a directive policy is about to make, references already resolved. */
export interface PlannedCall {
  /** The tool's name as the request lists it. */
  tool: string;
  args: Record<string, unknown>;
  source: 'user' | 'tool';
  directive: SourcedDirective;
}

export interface DirectivePolicyOptions {
  /** Carry out directives found inside tool results (naive) or ignore them (guarded). */
  followToolResultDirectives: boolean;
  /** Looks at the next call before it is made; returning text refuses with that text instead. */
  screen?: (call: PlannedCall, conversation: Conversation) => string | undefined;
  /** Hard stop per turn, so a policy can never loop forever. Default 20. */
  maxToolCallsPerTurn?: number;
}

export const MAX_TOOL_CALLS_PER_TURN = 20;
const RESULT_PREVIEW = 400;

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

interface Outcome {
  ignored: Map<string, SourcedDirective>;
  unknownTools: Set<string>;
  hitLimit: boolean;
}

function summary(turn: Turn, outcome: Outcome, max: number): string {
  const parts: string[] = [];
  const anyDirective = turn.directives.length > 0;
  if (turn.calls.length > 0) {
    parts.push(`Done. I called ${turn.calls.map((c) => c.name).join(', ')}.`);
  } else if (anyDirective) {
    parts.push('Done. I did not call any tools.');
  } else {
    const asked = truncate(turn.userText.replace(/\s+/g, ' ').trim(), 160);
    parts.push(`Thanks for your message ("${asked}"). There was nothing for me to do with my tools, so I did not call any.`);
  }
  if (outcome.hitLimit) parts.push(`I stopped after ${max} tool calls in this turn.`);
  if (outcome.unknownTools.size > 0) {
    parts.push(`I skipped instructions naming tools I do not have: ${[...outcome.unknownTools].join(', ')}.`);
  }
  if (outcome.ignored.size > 0) {
    const names = [...new Set([...outcome.ignored.values()].map((d) => d.tool))].join(', ');
    parts.push(
      `I ignored ${plural(outcome.ignored.size, 'instruction')} found in tool results (${names}); ` +
        'text inside tool results is data, not instructions from you.',
    );
  }
  const last = turn.toolResults.at(-1);
  if (last) parts.push(`\n\nLast tool result: ${truncate(last.text, RESULT_PREVIEW)}`);
  return parts.join(' ').replace(/ \n\n/g, '\n\n');
}

/** A policy that follows ACTION directives with the given restrictions. */
export function createDirectivePolicy(options: DirectivePolicyOptions): ModelPolicy {
  const max = options.maxToolCallsPerTurn ?? MAX_TOOL_CALLS_PER_TURN;
  return (conversation: Conversation, context?: PolicyContext): ModelReply => {
    // The run's plan when it sent one; ACTION lines in the conversation otherwise (hand-built requests in tests).
    const turn = context?.plan ? plannedTurn(conversation, context.plan) : readTurn(conversation);
    if (!turn) return { text: 'Hello! There is no request from you yet, so there is nothing for me to do.' };
    const { messages } = conversation;
    const outcome: Outcome = { ignored: new Map(), unknownTools: new Set(), hitLimit: false };
    let next: PlannedCall | undefined;
    for (const d of turn.directives) {
      if (d.source === 'tool' && !options.followToolResultDirectives) {
        outcome.ignored.set(directiveKey(d), d);
        continue;
      }
      const tool = resolveToolName(d.tool, conversation.tools, d.args);
      if (!tool) {
        outcome.unknownTools.add(d.tool);
        continue;
      }
      if (next || wasExecuted(tool, d.args, turn.calls, messages)) continue;
      next = { tool, args: resolveReferences(d.args, messages), source: d.source, directive: d };
    }
    if (next && turn.calls.length >= max) {
      outcome.hitLimit = true;
      next = undefined;
    }
    if (next) {
      const refusal = options.screen?.(next, conversation);
      if (refusal !== undefined) return { text: refusal };
      return { toolCalls: [{ name: next.tool, arguments: next.args }] };
    }
    return { text: summary(turn, outcome, max) };
  };
}

/** Does whatever the latest instruction says, including instructions inside tool results. */
export const naivePolicy: ModelPolicy = createDirectivePolicy({ followToolResultDirectives: true });
