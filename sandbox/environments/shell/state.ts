import { z } from 'zod';
import type { JsonObject } from '../../../engine/json.js';
import type { FilesSnapshot } from '../files/index.js';
import type { ShellRunner } from './runner.js';

/** The shell environment's state (workspace, default timeout, commands run, the runner), its snapshot, and running a command in it. See `index.ts`. */

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

export const shellConfig = z.object({
  /** Host directory of the workspace. Not part of the snapshot. */
  root: z.string(),
  defaultTimeoutSeconds: z.int().min(1).max(MAX_COMMAND_TIMEOUT_SECONDS).default(DEFAULT_COMMAND_TIMEOUT_SECONDS),
  commands: z.array(shellCommandRecord).default([]),
});

export interface ShellState extends z.infer<typeof shellConfig> {
  runner: ShellRunner;
}

/** What `snapshot()` returns: the workspace's files (as the files environment shows them) and the commands run. */
export interface ShellSnapshot extends JsonObject {
  files: FilesSnapshot['files'];
  commands: ShellCommandRecord[];
}

/** Runs `command` in the workspace through the state's runner. */
export async function runInWorkspace(state: ShellState, command: string, timeoutSeconds: number) {
  return state.runner.run({ command, workspace: state.root, timeoutMs: timeoutSeconds * 1000, maxOutputBytes: MAX_COMMAND_OUTPUT_BYTES });
}
