import type { Bash as BashType, IFileSystem } from 'just-bash';
import { shellInvocationCommands, writeCommandEntries } from './shell-invocation.js';
import { wgetCommand } from './wget-command.js';
import { WorkspaceShellFs } from './workspace-shell-fs.js';
import { DEFAULT_SHELL_PATH, SANDBOX_WORKSPACE, type ShellNetwork, type ShellRunner, type ShellRunResult } from './runner.js';

/**
 * The default shell of the in-process backend: commands run in `just-bash`, an embedded bash
 * interpreter with its own implementations of the usual commands (ls, cat, grep, sed, awk, jq,
 * curl, tar, …), so no host process ever starts. Its file system shows the run's workspace at
 * `/workspace` (the same directory the `files` environment reads: changes are visible to both),
 * through the same race-free descriptor-based layer (`workspace-shell-fs.ts`: symlinks may not lead
 * out of it, even when swapped in while a command runs), an in-memory `/tmp`, and nothing of the host. Its network
 * is the environment's simulation (`ShellNetwork`): curl and wget requests are recorded and
 * answered, and never leave the machine. Needs nothing but Node.
 *
 * What it is not: real programs (no node, python, git or compilers — they are "command not
 * found"), and not a perfect bash; cases that need real programs use the bubblewrap runner or
 * the container backend.
 */

type JustBash = typeof import('just-bash');
let loaded: Promise<JustBash> | undefined;
/** just-bash is a large module: loaded on the first command, not when the sandbox module is imported. */
function loadJustBash(): Promise<JustBash> {
  return (loaded ??= import('just-bash'));
}

const encoder = new TextEncoder();

/** What one simulated command may hold in memory (just-bash's defaults are hundreds of MiB each). */
export const SHELL_MEMORY_LIMITS = {
  maxOutputSize: 16 * 1024 * 1024,
  maxStringLength: 16 * 1024 * 1024,
  maxHeredocSize: 4 * 1024 * 1024,
  maxLiveBytes: 64 * 1024 * 1024,
  maxInputBytes: 64 * 1024 * 1024,
  maxFileSystemBytes: 64 * 1024 * 1024,
} as const;

function capText(text: string, maxBytes: number): { text: string; dropped: number } {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return { text, dropped: 0 };
  const kept = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
  return { text: kept, dropped: bytes - Buffer.byteLength(kept) };
}

/** The just-bash `fetch` hook over the environment's network: nothing is sent anywhere. */
function fetchOver(network: ShellNetwork | undefined) {
  return async (url: string, options: { method?: string; headers?: Headers | Record<string, string>; body?: string } = {}) => {
    if (!network) throw new Error(`network is unreachable (${url})`);
    const headers: Record<string, string> = {};
    if (options.headers instanceof Headers) options.headers.forEach((v, k) => (headers[k] = v));
    else Object.assign(headers, options.headers ?? {});
    const response = network({ method: (options.method ?? 'GET').toUpperCase(), url, headers, body: options.body ?? '' });
    return { status: response.status, statusText: response.status < 400 ? 'OK' : 'Error', headers: response.headers, body: encoder.encode(response.body), url };
  };
}

export function createSimulatedShellRunner(): ShellRunner {
  // One file system view per workspace, so /tmp persists between the commands of a run.
  const views = new Map<string, IFileSystem>();
  return {
    name: 'simulated',
    async check() {
      await loadJustBash();
    },
    async run(request): Promise<ShellRunResult> {
      const { Bash, InMemoryFs, MountableFs, getCommandNames, getNetworkCommandNames } = await loadJustBash();
      let fs = views.get(request.workspace);
      if (!fs) {
        const base = new InMemoryFs();
        await base.mkdir('/tmp', { recursive: true });
        await writeCommandEntries(base, [...getCommandNames(), ...getNetworkCommandNames(), 'wget']);
        fs = new MountableFs({ base, mounts: [{ mountPoint: SANDBOX_WORKSPACE, filesystem: new WorkspaceShellFs(request.workspace) }] });
        views.set(request.workspace, fs);
      }
      const fetch = fetchOver(request.network);
      const bash: BashType = new Bash({
        fs,
        cwd: SANDBOX_WORKSPACE,
        env: { PATH: DEFAULT_SHELL_PATH, HOME: SANDBOX_WORKSPACE, LANG: 'C.UTF-8', TMPDIR: '/tmp', USER: 'user' },
        fetch,
        customCommands: [wgetCommand(fetch), ...shellInvocationCommands],
        // just-bash's own time limit is a backstop behind the abort below, which marks the timeout.
        // The memory a command may take is bounded too: its output is cut to maxOutputBytes anyway,
        // and a `printf "%52428800s"` must not cost the test process hundreds of megabytes.
        executionLimits: { maxExecutionTimeMs: request.timeoutMs + 5_000, ...SHELL_MEMORY_LIMITS },
      });
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, request.timeoutMs);
      const started = performance.now();
      let result: { stdout: string; stderr: string; exitCode: number };
      try {
        result = await bash.exec(request.command, { signal: controller.signal });
      } catch (error) {
        result = { stdout: '', stderr: `sh: ${(error as Error).message}\n`, exitCode: timedOut ? 124 : 2 };
      } finally {
        clearTimeout(timer);
      }
      // Under load the abort may land after the command gave up on its own limit: still a timeout.
      if (performance.now() - started >= request.timeoutMs) timedOut = true;
      const stdout = capText(result.stdout, request.maxOutputBytes);
      const stderr = capText(result.stderr, request.maxOutputBytes);
      return {
        cwd: SANDBOX_WORKSPACE,
        exitCode: timedOut ? null : result.exitCode,
        signal: null,
        stdout: stdout.text,
        stderr: stderr.text,
        timedOut,
        truncated: stdout.dropped + stderr.dropped > 0,
        durationMs: Math.round(performance.now() - started),
      };
    },
    release(workspace) {
      views.delete(workspace);
    },
  };
}
