/** `vera-safety/adapters`: agents under test behind the execution contract. */
export { AgentError, type AgentAdapter, type AgentSession, type AgentStartContext, type AgentTurn, type TokenUsage } from './adapter.js';
export { referenceAgent, openAIClient, DEFAULT_SYSTEM_PROMPT, type ReferenceAgentOptions } from './reference-agent.js';
export { functionAgent, type AgentFunction, type FunctionAgentTools } from './function-adapter.js';
