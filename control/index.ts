/** `vera-safety/control`: who drives the conversation. */
export * from './control.js';
export { benignUser } from './benign-user.js';
export { scriptedAdversary } from './scripted-adversary.js';
export { llmAdversary, adversarySystemPrompt, describeObservation, parseDecision, type LlmAdversaryOptions } from './llm-adversary.js';
