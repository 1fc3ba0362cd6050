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
  type WireRequest,
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
// The other wires, for a server of your own (docs/scripted-model.md): their request parsers and
// body builders are internals.
export { responsesWire } from './responses-wire.js';
export { anthropicMessagesWire } from './anthropic-messages-wire.js';
export { geminiWire } from './gemini-wire.js';
