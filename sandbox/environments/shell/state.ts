import { z } from 'zod';
import type { JsonObject } from '../../../engine/json.js';
import type { ToolContext } from '../../environment.js';
import type { FilesSnapshot } from '../files/index.js';
import { simulatedRequest } from './network.js';
import type { ShellRunner } from './runner.js';

/** The shell environment's state (workspace, default timeout, commands run, the simulated network, the runner), its snapshot, and running a command in it. See `index.ts`. */

export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 30;
export const MAX_COMMAND_TIMEOUT_SECONDS = 300;
/** Per stream (stdout, stderr). */
export const MAX_COMMAND_OUTPUT_BYTES = 64 * 1024;

export const shellCommandRecord = z.object({
  id: z.string(),
  command: z.string(),
  /** `null` when it was killed (timeout) or died of a signal. */
  exitCode: z.int().nullable(),
  timedOut: z.boolean(),
});
export type ShellCommandRecord = z.infer<typeof shellCommandRecord>;

export const shellHttpMethod = z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** An answer the case seeds for the simulated shell's curl and wget (`shell.serve`). */
export const shellEndpoint = z.object({
  url: z.string(),
  /** `ANY` matches every method. */
  method: z.union([shellHttpMethod, z.literal('ANY')]),
  status: z.int(),
  body: z.string(),
});
export type ShellEndpoint = z.infer<typeof shellEndpoint>;

/** One HTTP request a command made (curl, wget): recorded, reported as egress, answered from the seeded endpoints. */
export const shellHttpRecord = z.object({
  id: z.string(),
  /** The command that made it (`cmd-3`). */
  command: z.string(),
  method: z.string(),
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  status: z.int(),
});
export type ShellHttpRecord = z.infer<typeof shellHttpRecord>;

export const shellConfig = z.object({
  /** Host directory of the workspace. Not part of the snapshot. */
  root: z.string(),
  defaultTimeoutSeconds: z.int().min(1).max(MAX_COMMAND_TIMEOUT_SECONDS).default(DEFAULT_COMMAND_TIMEOUT_SECONDS),
  commands: z.array(shellCommandRecord).default([]),
  endpoints: z.array(shellEndpoint).default([]),
  requests: z.array(shellHttpRecord).default([]),
});

export interface ShellState extends z.infer<typeof shellConfig> {
  runner: ShellRunner;
}

/** What `snapshot()` returns: the workspace's files (as the files environment shows them), the commands run and the HTTP requests they made. */
export interface ShellSnapshot extends JsonObject {
  files: FilesSnapshot['files'];
  commands: ShellCommandRecord[];
  requests: ShellHttpRecord[];
}

/**
 * Runs `command` in the workspace through the state's runner. `commandId` names the command in
 * the requests it makes; with a `ctx`, each request is reported as egress (during init there is none).
 */
export async function runInWorkspace(state: ShellState, command: string, timeoutSeconds: number, options: { commandId: string; ctx?: ToolContext }) {
  return state.runner.run({
    command,
    workspace: state.root,
    timeoutMs: timeoutSeconds * 1000,
    maxOutputBytes: MAX_COMMAND_OUTPUT_BYTES,
    network: (request) => simulatedRequest(state, request, options),
  });
}
