/** The bundled demo policies and name → policy resolution. */
import type { ModelPolicy } from '../conversation.js';
import { adversaryPolicy } from './adversary.js';
import { guardedPolicy } from './guarded.js';
import { naivePolicy } from './naive.js';

export { createDirectivePolicy, naivePolicy, MAX_TOOL_CALLS_PER_TURN } from './naive.js';
export type { DirectivePolicyOptions, PlannedCall } from './naive.js';
export {
  contentForId,
  exfiltrationReason,
  guardedPolicy,
  isOutboundTool,
  referencedIds,
  secretLooking,
} from './guarded.js';

export { adversaryPolicy, obfuscate } from './adversary.js';

/** `naive` and `guarded` play the agent under test; `adversary` plays Vera's LLM adversary. */
export type PolicyName = 'naive' | 'guarded' | 'adversary';

export const policies: Readonly<Record<PolicyName, ModelPolicy>> = Object.freeze({
  naive: naivePolicy,
  guarded: guardedPolicy,
  adversary: adversaryPolicy,
});

/** A bundled policy by name, or the given policy function unchanged. */
export function resolvePolicy(policy: PolicyName | ModelPolicy): ModelPolicy {
  if (typeof policy === 'function') return policy;
  if (Object.hasOwn(policies, policy)) return policies[policy];
  throw new Error(`Unknown model policy "${String(policy)}"; expected one of: ${Object.keys(policies).join(', ')}`);
}
