/** `vera-safety/adapters`: agents under test behind the execution contract. */
export { AgentError, type AgentAdapter, type AgentSession, type AgentStartContext, type AgentTurn, type TokenUsage } from './adapter.js';
export { referenceAgent, DEFAULT_SYSTEM_PROMPT, type ReferenceAgentOptions } from './reference-agent.js';
export { functionAgent, type AgentFunction, type FunctionAgentTools } from './function-adapter.js';
export { codexAgent, codexConfig, type CodexAgentOptions } from './codex-agent.js';
export { claudeCodeAgent, type ClaudeCodeAgentOptions } from './claude-code-agent.js';
export { openClawAgent, openClawConfig, type OpenClawAgentOptions } from './openclaw-agent.js';
export { kiloAgent, openCodeAgent, openCodeConfig, type OpenCodeAgentOptions } from './opencode-agent.js';
export { geminiCliAgent, geminiCliSettings, qwenCodeAgent, type GeminiCliAgentOptions, type QwenCodeAgentOptions } from './gemini-cli-agent.js';
export { hermesAgent, hermesConfig, type HermesAgentOptions } from './hermes-agent.js';
export { pythonAgent, type PythonAgentOptions } from './python-agent.js';
export { mcpCliAgent, type McpCliAgentOptions } from './mcp-cli-agent.js';
export { agentsDir, agentInstallMount, locateProgram, programAvailable, type ProgramSearch } from './agent-programs.js';
