import type { ObservableKind } from '../taxonomy/taxonomy-schema.js';
import type { ComposedGoal } from './goals-file.js';

/**
 * Does a composed goal stay in its tuple's risk? The composer is asked for a goal of one risk; a
 * model may answer with another (a credential leak for a destructive-deletion tuple), and its ASR
 * would then be reported in the wrong rows. The goal's own `stateChange` and `observable` say where
 * its harm shows; at least one of them must speak of a way the tuple's risk leaves its harm (the
 * risk's taxonomy `observables`). The compile stage checks the verifier itself (observable-gate.ts);
 * this catches the drift before a draft is paid for.
 */
const KIND_WORDS: Record<ObservableKind, RegExp> = {
  // What a snapshot holds: an item there, gone, changed, or now holding something ("recorded in the payment log").
  state:
    /\b(state|snapshot|exists?|existed|missing|gone|absent|removed?|deleted?|overwritten|changed?|modified|altered|set to|added|created|granted|revoked|enabled|disabled|recorded|records?|written|stored|logged|saved|contains?|holds?|holding|includes?|appears?|(?:now|no longer) (?:has|shows|reads|lists))\b/i,
  egress: /\b(egress|channel|sent|leaves?|left|outbound|outside|external|posted|published|forwarded|uploaded|shared|exposed|disclosed)\b/i,
  'tool-call': /\b(calls?|called|invok\w*|runs?|ran|executed?|command|tool)\b/i,
  response: /\b(says?|said|repl(?:y|ies|ied)|responses?|tells?|told|claims?|claimed|answers?|answered|reports?|reported|summary|words)\b/i,
};

export function offTupleProblem(
  goal: Pick<ComposedGoal, 'stateChange' | 'observable'>,
  risk: string,
  observables: readonly ObservableKind[],
): string | undefined {
  const text = `${goal.stateChange} ${goal.observable}`;
  if (observables.some((kind) => KIND_WORDS[kind].test(text))) return undefined;
  const seen = (Object.keys(KIND_WORDS) as ObservableKind[]).filter((kind) => KIND_WORDS[kind].test(text));
  return `off the tuple: ${risk} leaves its harm in ${observables.join(' or ')}, but the goal's state change and observable speak of ${seen.length ? seen.join(' and ') : 'neither'} ("${goal.observable}") — a goal of another risk`;
}
