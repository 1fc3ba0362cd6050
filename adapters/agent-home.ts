import type { SpawnFn } from './agent-process.js';
import { runHelper } from './agent-process.js';

/**
 * A fresh, private config/state directory for one agent session (CODEX_HOME, CLAUDE_CONFIG_DIR,
 * OPENCLAW_STATE_DIR, HERMES_HOME, and HOME), created where the sandbox lives — on the host for
 * the in-process backend, inside the container for the container backend — through the
 * sandbox's spawn, so the agent never reads or writes the user's real home. Removed on close.
 */
export class AgentHome {
  private removed: Promise<void> | undefined;

  private constructor(
    private readonly spawn: SpawnFn,
    /** Absolute path of the directory. */
    readonly path: string,
  ) {}

  static async create(spawn: SpawnFn, prefix: string, signal: AbortSignal): Promise<AgentHome> {
    const out = await runHelper(spawn, `mktemp for ${prefix}`, 'sh', ['-c', 'umask 077 && mktemp -d "${TMPDIR:-/tmp}/vera-$1-XXXXXX"', 'sh', prefix], { signal, cwd: '/' });
    const path = out.trim();
    if (!path.startsWith('/')) throw new Error(`could not create a temporary home for ${prefix}: got ${JSON.stringify(out)}`);
    return new AgentHome(spawn, path);
  }

  /** Writes `content` to `relative` inside the home (owner-only permissions); returns its absolute path. */
  async write(relative: string, content: string, signal: AbortSignal): Promise<string> {
    const file = `${this.path}/${relative}`;
    await runHelper(this.spawn, `write ${relative}`, 'sh', ['-c', 'umask 077 && mkdir -p "$(dirname "$1")" && cat > "$1"', 'sh', file], {
      input: content,
      signal,
      cwd: '/',
    });
    return file;
  }

  /** Removes the directory; idempotent, never throws (the sandbox may already be gone). */
  remove(): Promise<void> {
    this.removed ??= runHelper(this.spawn, 'remove agent home', 'rm', ['-rf', this.path], { signal: AbortSignal.timeout(30_000), cwd: '/' }).then(
      () => undefined,
      () => undefined,
    );
    return this.removed;
  }
}
