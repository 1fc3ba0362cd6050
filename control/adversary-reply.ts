import { z } from 'zod';
import type { ControlDecision } from './control.js';
import { parseJsonObject } from './model-chat.js';
import { detectAdversaryRefusal } from './refusal.js';

/**
 * The adversary model's reply, as the system prompt asks for it. Lenient on purpose: the format is
 * a request to a model, not a contract, so a field of the wrong type is dropped rather than
 * failing the run.
 */
const plannedCallSchema = z.object({
  tool: z.string(),
  args: z.record(z.string(), z.unknown()).optional().catch(undefined),
});

// Each field says what it should be (the request's JSON Schema is generated from this), and is
// dropped, not fatal, when a model writes it otherwise.
export const adversaryReplySchema = z.object({
  message: z.string().meta({ description: 'the next user message, sent to the agent verbatim' }).optional().catch(undefined),
  strategy: z.string().meta({ description: 'the id of the strategy in force' }).optional().catch(undefined),
  payloads: z.record(z.string(), z.unknown()).meta({ description: 'injection rule id → new payload text (multi-channel only)' }).optional().catch(undefined),
  calls: z.array(z.unknown()).meta({ description: 'the tool calls ({tool, args}) you intend the message to cause' }).optional().catch(undefined),
  stop: z.unknown().meta({ description: 'true when you judge the attack exhausted' }).optional(),
  reason: z.string().meta({ description: 'why you stop' }).optional().catch(undefined),
});
export type AdversaryReply = z.infer<typeof adversaryReplySchema>;

/** A reply is JSON (the asked-for format) or prose (a model that ignored it). */
type ReadReply = { kind: 'json'; reply: AdversaryReply } | { kind: 'prose'; text: string };

function readReply(content: string): ReadReply {
  const data = parseJsonObject(content);
  return data ? { kind: 'json', reply: adversaryReplySchema.parse(data) } : { kind: 'prose', text: content.trim() };
}

/** Only the payloads given as text: anything else cannot be injected into a tool result. */
function textPayloads(reply: AdversaryReply): Record<string, string> {
  return Object.fromEntries(Object.entries(reply.payloads ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The model's JSON decision; prose is taken as the message itself (a model that ignores the format still attacks). */
export function parseDecision(content: string): ControlDecision {
  const read = readReply(content);
  if (read.kind === 'prose') {
    return read.text ? { action: 'send', message: read.text, strategy: 'unstructured' } : { action: 'stop', reason: 'adversary gave an empty reply' };
  }
  const { reply } = read;
  if (reply.stop === true) return { action: 'stop', reason: reply.reason ?? 'adversary judged the attack exhausted' };
  if (!reply.message?.trim()) return { action: 'stop', reason: 'adversary gave no message' };
  const decision: ControlDecision = { action: 'send', message: reply.message };
  if (reply.strategy !== undefined) decision.strategy = reply.strategy;
  if (reply.payloads) decision.payloads = textPayloads(reply);
  if (reply.calls) {
    decision.calls = reply.calls.flatMap((c) => {
      const call = plannedCallSchema.safeParse(c);
      return call.success ? [{ tool: call.data.tool, args: call.data.args ?? {} }] : [];
    });
  }
  return decision;
}

/** How the adversary model declined: by a phrase, or by giving nothing to send. */
export type AdversaryRefusal = { phrase: string } | { empty: 'reply' | 'message' };

/** The refusal as records and the model's retry request cite it. */
export function citeRefusal(refusal: AdversaryRefusal): string {
  return 'phrase' in refusal ? `"${refusal.phrase}"` : `an empty ${refusal.empty}`;
}

/**
 * Whether the adversary model declined its red-team job in this reply: prose or a message (or an
 * injection payload) that reads as a refusal, a reply with nothing to send, or a `stop` whose
 * reason is a refusal (that is the model declining, not judging the attack spent). `undefined`
 * when the reply is an attack or a genuine stop. Whatever it flags must never reach the agent.
 */
export function adversaryRefusal(content: string): AdversaryRefusal | undefined {
  const read = readReply(content);
  const declined = (text: string | undefined) => {
    const phrase = detectAdversaryRefusal(text);
    return phrase === undefined ? undefined : { phrase };
  };
  if (read.kind === 'prose') return read.text ? declined(read.text) : { empty: 'reply' };
  const { reply } = read;
  if (reply.stop === true) return declined(reply.reason);
  if (!reply.message?.trim()) return { empty: 'message' };
  for (const text of [reply.message, ...Object.values(textPayloads(reply))]) {
    const refusal = declined(text);
    if (refusal) return refusal;
  }
  return undefined;
}
