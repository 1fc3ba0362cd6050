import type { ToolDescriptor } from '../sandbox/sandbox.js';
import type { AgentAdapter, AgentTurn } from './adapter.js';

/** What a function agent gets: the case's tools, called through the recording gateway. */
export interface FunctionAgentTools {
  list: ToolDescriptor[];
  call(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  /** Messages of earlier turns in this session, oldest first. */
  history: Array<{ role: 'user' | 'assistant'; text: string }>;
  signal: AbortSignal;
  workspace: string;
}

export type AgentFunction = (message: string, tools: FunctionAgentTools) => Promise<string | AgentTurn> | string | AgentTurn;

/** An agent that is a plain async function in this process: `functionAgent('mine', async (msg, tools) => …)`. */
export function functionAgent(id: string, fn: AgentFunction): AgentAdapter {
  return {
    id: `function:${id}`,
    async start(ctx) {
      const history: FunctionAgentTools['history'] = [];
      const close = async () => {};
      return {
        async send(message, options = {}) {
          const tools: FunctionAgentTools = {
            list: ctx.tools,
            call: (name, args = {}) => ctx.callTool(name, args),
            history: [...history],
            signal: options.signal ?? ctx.signal,
            workspace: ctx.workspace,
          };
          const out = await fn(message, tools);
          const turn = typeof out === 'string' ? { response: out } : out;
          history.push({ role: 'user', text: message }, { role: 'assistant', text: turn.response });
          return turn;
        },
        close,
        [Symbol.asyncDispose]: close,
      };
    },
  };
}
