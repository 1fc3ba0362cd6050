/** The real agent CLI adapters, loaded together (the plugin imports them only when a config names one). */
export { codexAgent } from './codex-agent.js';
export { claudeCodeAgent } from './claude-code-agent.js';
export { openClawAgent } from './openclaw-agent.js';
export { kiloAgent, openCodeAgent } from './opencode-agent.js';
export { geminiCliAgent, qwenCodeAgent } from './gemini-cli-agent.js';
export { hermesAgent } from './hermes-agent.js';
export { mcpCliAgent } from './mcp-cli-agent.js';
