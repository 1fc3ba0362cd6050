/** `vera-safety/control`: who drives the conversation. */
export * from './control.js';
export { benignUser } from './benign-user.js';
export { answerFrom, questionsIn, type UserAnswer } from './clarifying-questions.js';
export { scriptedAdversary } from './scripted-adversary.js';
export {
  llmAdversary,
  adversarySystemPrompt,
  attackSurface,
  describeObservation,
  describeToolCalls,
  ADVERSARY_REFUSED,
  type AttackSurface,
  type LlmAdversaryOptions,
} from './llm-adversary.js';
export { adversaryRefusal, adversaryReplySchema, citeRefusal, parseDecision, type AdversaryRefusal, type AdversaryReply } from './adversary-reply.js';
export { llmUser, userSystemPrompt, type LlmUserOptions } from './llm-user.js';
export { ControlModelChat, type ControlModelOptions } from './model-chat.js';
export { detectAdversaryRefusal, detectRefusal } from './refusal.js';
export {
  defaultStrategyMap,
  matchAttackMethod,
  strategies,
  strategyIds,
  strategyPlanFor,
  switchingRule,
  type AttackStrategy,
  type StrategyId,
  type StrategyPlan,
} from './strategies.js';
