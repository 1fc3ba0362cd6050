/**
 * `vera-safety/control`: who drives the conversation — the honest user, the scripted and LLM
 * adversaries, their strategies, and the contract a control agent of your own implements. The
 * prompts and reply parsers behind them are internals (docs/threat-models.md describes them).
 */
export type {
  ControlAgent,
  ControlContext,
  ControlDecision,
  ControlExchange,
  ControlObservation,
  ControlRole,
  ControlSession,
  StrategySwitch,
} from './control.js';
export { ControlError } from './control.js';
export { benignUser } from './benign-user.js';
export { scriptedAdversary } from './scripted-adversary.js';
export { llmAdversary, ADVERSARY_REFUSED, type LlmAdversaryOptions } from './llm-adversary.js';
export { llmUser, type LlmUserOptions } from './llm-user.js';
export type { ControlModelOptions } from './model-chat.js';
export { detectRefusal } from './refusal.js';
export { strategies, strategyIds, strategyPlanFor, type AttackStrategy, type StrategyId, type StrategyPlan } from './strategies.js';
