import type { z } from 'zod';
import { defineOperation, defineTool, type OperationSpec, type ToolSpec } from '../../environment.js';

/**
 * `tool` and `operation` for an environment whose state is `S`: `defineTool` / `defineOperation`
 * with the state type fixed, so each spec literal infers its own argument types.
 */
export function specBuilders<S>() {
  return {
    tool: <I extends z.ZodObject>(spec: ToolSpec<S, I>) => defineTool(spec),
    operation: <I extends z.ZodObject>(spec: OperationSpec<S, I>) => defineOperation(spec),
  };
}
