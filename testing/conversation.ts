import type { RunPlan } from '../engine/scripted-plan.js';

/**
 * The wire-independent view of one model request that scripts and policies read, and the reply
 * they produce. Each wire protocol (Chat Completions today; Responses and Anthropic Messages
 * later) converts its request into a `Conversation` and a `ModelReply` back into its own format.
 */

export interface ConversationToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ConversationMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  text: string;
  /** Tool calls the assistant made in this message. */
  toolCalls?: ConversationToolCall[];
  /** For `tool` messages: which call this is the result of, and its tool's name when known. */
  toolCallId?: string;
  toolName?: string;
  /**
   * A `user` message the agent program added around the user's words (Codex's environment
   * context, Claude Code's system reminders, OpenClaw's internal-context block), not typed by
   * the user. Policies and scripts skip it when they look for the current turn.
   */
  context?: boolean;
}

export interface ConversationTool {
  name: string;
  description?: string;
  parameters?: unknown;
}

export interface Conversation {
  model: string;
  messages: ConversationMessage[];
  tools: ConversationTool[];
}

export interface ModelReply {
  text?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

/** What a policy knows beyond the request: the run's plan, when the run sent one (see engine/scripted-plan.ts). */
export interface PolicyContext {
  plan?: RunPlan;
}

/** Decides the next reply from the conversation so far (and the run's plan, when there is one). */
export type ModelPolicy = (conversation: Conversation, context?: PolicyContext) => ModelReply | Promise<ModelReply>;
