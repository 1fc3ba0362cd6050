import { tokens } from '../explore/sources/document-corpus.js';
import type { ComposedGoal, Tuple } from './goals-file.js';

/**
 * Goals are deduplicated on what they mean, not how they are worded: the risk (its leaf after
 * merges), the environment, the target resource, the intended state change and the context.
 * Text fields are normalised to sets of word stems (lower case, punctuation and stop words
 * dropped, "e-mail" = "email", plurals folded) and compared by overlap (Jaccard). Two goals are
 * duplicates when risk and environment are equal and the resource, state change and context each
 * overlap at least `DEDUPE_THRESHOLD`.
 */
export const DEDUPE_THRESHOLD = 0.5;

export interface GoalKey {
  risk: string;
  environment: string;
  resource: string[];
  change: string[];
  context: string[];
}

export function normalise(text: string): string[] {
  const prepared = text
    .toLowerCase()
    .replace(/\be-mail/g, 'email')
    .replace(/[-_/]/g, ' ');
  return [...new Set(tokens(prepared))].sort();
}

export function goalKey(tuple: Pick<Tuple, 'risk' | 'environment'>, goal: Pick<ComposedGoal, 'targetResource' | 'stateChange' | 'context'>): GoalKey {
  return {
    risk: tuple.risk,
    environment: tuple.environment,
    resource: normalise(goal.targetResource),
    change: normalise(goal.stateChange),
    context: normalise(goal.context),
  };
}

export function overlap(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const setB = new Set(b);
  const common = a.filter((t) => setB.has(t)).length;
  return common / (a.length + b.length - common);
}

export function isDuplicate(a: GoalKey, b: GoalKey, threshold = DEDUPE_THRESHOLD): boolean {
  return (
    a.risk === b.risk &&
    a.environment === b.environment &&
    overlap(a.resource, b.resource) >= threshold &&
    overlap(a.change, b.change) >= threshold &&
    overlap(a.context, b.context) >= threshold
  );
}
