/**
 * `vera-safety/testing`: a local scripted stand-in for an LLM API, for tests, demos and
 * benchmarks. See docs/scripted-model.md.
 */
export type {
  Conversation,
  ConversationMessage,
  ConversationTool,
  ConversationToolCall,
  ModelPolicy,
  ModelReply,
} from './conversation.js';
export {
  DEFAULT_MODEL,
  startScriptedModelServer,
  WireRequestError,
  type ModelServerStats,
  type RecordedRequest,
  type ScriptedModelServerOptions,
  type StartedModelServer,
  type WireAdapter,
  type WireContext,
  type WireReply,
} from './scripted-model-server.js';
export {
  chatCompletionBody,
  chatCompletionChunks,
  chatCompletionsWire,
  chatRequestToConversation,
} from './chat-completions-wire.js';
export {
  checkExpectation,
  ScriptMismatchError,
  ScriptedHttpError,
  scriptPolicy,
  type ScriptExpect,
  type ScriptPattern,
  type ScriptPolicy,
  type ScriptStep,
} from './script.js';
export {
  baseToolName,
  directivesInText,
  parseDirectives,
  readTurn,
  resolveReferences,
  resolveToolName,
  toolNameMatches,
  wasExecuted,
  type Directive,
  type MadeCall,
  type SourcedDirective,
  type Turn,
} from './directives.js';
export {
  adversaryPolicy,
  obfuscate,
  createDirectivePolicy,
  exfiltrationReason,
  guardedPolicy,
  isOutboundTool,
  naivePolicy,
  policies,
  resolvePolicy,
  secretLooking,
  type DirectivePolicyOptions,
  type PlannedCall,
  type PolicyName,
} from './policies/index.js';
export { responsesWire, responsesRequestToConversation, responseBody, responseEvents } from './responses-wire.js';
export { anthropicMessagesWire, messagesRequestToConversation, messageBody, messageEvents } from './anthropic-messages-wire.js';
export { isAgentContextText, splitAgentContext } from './agent-context.js';
export { isRealUserMessage, lastUserIndex } from './directives.js';
