/**
 * The current turn of a conversation as the run's plan describes it (engine/scripted-plan.ts):
 * the calls that follow the user's message, and the calls that follow each injected tool result —
 * known to the scripted model out of band, so the conversation itself is plain language. The
 * policies act on these exactly as they acted on ACTION lines: the user's first, then each tool
 * result's, skipping what was already done.
 */
import type { PlanCall, RunPlan } from '../engine/scripted-plan.js';
import type { Conversation, ConversationMessage } from './conversation.js';
import {
  directiveKey,
  directivesInText,
  isPlainObject,
  isRealUserMessage,
  lastUserIndex,
  tryJson,
  type MadeCall,
  type SourcedDirective,
  type Turn,
} from './directives.js';

function asDirective(call: PlanCall, source: 'user' | 'tool', messageIndex: number): SourcedDirective {
  return { tool: call.tool, args: call.args, text: `planned ${directiveKey(call)}`, source, messageIndex };
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The plan entry of the user's message: same text (whitespace aside), else one text inside the other, else by position. */
function turnEntry(plan: RunPlan, messages: readonly ConversationMessage[], userIndex: number): PlanCall[] {
  const text = squash(messages[userIndex]!.text);
  const exact = plan.turns.filter((t) => squash(t.text) === text);
  if (exact.length > 0) return exact.at(-1)!.calls;
  const within = plan.turns.filter((t) => t.text.trim() !== '' && (text.includes(squash(t.text)) || squash(t.text).includes(text)));
  if (within.length > 0 && text !== '') return within.at(-1)!.calls;
  const position = messages.slice(0, userIndex + 1).filter(isRealUserMessage).length - 1;
  return plan.turns[position]?.calls ?? [];
}

/** Every string inside a tool result (its text, and the strings of its JSON), to find an injected payload in. */
function resultStrings(text: string): string[] {
  const out = [text];
  const visit = (value: unknown, depth: number) => {
    if (typeof value === 'string') {
      out.push(value);
      if (depth < 3) {
        const inner = tryJson(value);
        if (inner !== undefined) visit(inner, depth + 1);
      }
    } else if (Array.isArray(value)) value.forEach((v) => visit(v, depth));
    else if (isPlainObject(value)) Object.values(value).forEach((v) => visit(v, depth));
  };
  const parsed = tryJson(text);
  if (parsed !== undefined) visit(parsed, 0);
  return out;
}

/** Each injection's payload, whitespace squashed, once per plan (a plan is read on every request of its run). */
const squashedPayloads = new WeakMap<RunPlan, Array<{ payload: string; calls: PlanCall[] }>>();
function payloadsOf(plan: RunPlan): Array<{ payload: string; calls: PlanCall[] }> {
  let out = squashedPayloads.get(plan);
  if (!out) {
    out = plan.injections.map((i) => ({ payload: squash(i.payload), calls: i.calls })).filter((i) => i.payload !== '');
    squashedPayloads.set(plan, out);
  }
  return out;
}

/** The calls of the injections whose payload appears in this tool result. */
function injectedCalls(plan: RunPlan, text: string): PlanCall[] {
  const strings = resultStrings(text).map(squash);
  return payloadsOf(plan)
    .filter((i) => strings.some((s) => s.includes(i.payload)))
    .flatMap((i) => i.calls);
}

/**
 * The turn with the plan's calls first, then — for hand-written test conversations — any ACTION
 * lines in the same messages (bundled cases have none: test/plain-language.test.ts checks).
 */
export function plannedTurn(conversation: Conversation, plan: RunPlan): Turn | undefined {
  const { messages } = conversation;
  const userIndex = lastUserIndex(messages);
  if (userIndex < 0) return undefined;
  const userText = messages[userIndex]!.text;
  const directives: SourcedDirective[] = [
    ...turnEntry(plan, messages, userIndex).map((c) => asDirective(c, 'user', userIndex)),
    ...directivesInText(userText).map((d) => ({ ...d, source: 'user' as const, messageIndex: userIndex })),
  ];
  // A poisoned tool list (tool poisoning, a rug pull): third-party text, like a tool result.
  const payloads = payloadsOf(plan);
  const descriptions = payloads.length > 0 ? conversation.tools.map((t) => squash(t.description ?? '')) : [];
  for (const i of payloads) {
    if (descriptions.some((d) => d.includes(i.payload))) for (const c of i.calls) directives.push(asDirective(c, 'tool', userIndex));
  }
  const calls: MadeCall[] = [];
  const toolResults: ConversationMessage[] = [];
  for (let i = userIndex + 1; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'assistant') {
      for (const c of m.toolCalls ?? []) calls.push({ name: c.name, args: c.arguments, messageIndex: i });
    } else if (m.role === 'tool') {
      toolResults.push(m);
      for (const c of injectedCalls(plan, m.text)) directives.push(asDirective(c, 'tool', i));
      for (const d of directivesInText(m.text)) directives.push({ ...d, source: 'tool', messageIndex: i });
    }
  }
  return { userIndex, userText, directives, calls, toolResults };
}
