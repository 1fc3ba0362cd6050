import { AgentError } from './adapter.js';
import type { SpawnFn } from './agent-process.js';
import { runHelper } from './agent-process.js';

/** Exit code of the home script when a program is not visible where the sandbox runs. */
const PROGRAM_MISSING = 3;

/**
 * Creates the home (owner-only) after checking that every program exists where the sandbox
 * runs: `$1` is the prefix, the rest are program paths. One `sh` for both, so the container
 * backend pays one `docker exec`.
 */
const CREATE_HOME = `umask 077
prefix=$1; shift
for p in "$@"; do [ -e "$p" ] || { printf '%s\\n' "$p" >&2; exit ${PROGRAM_MISSING}; }; done
mktemp -d "\${TMPDIR:-/tmp}/vera-$prefix-XXXXXX"`;

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

  /**
   * `programs`: absolute paths the session will run. With the container backend they must be
   * visible inside the container at the same path (a read-only bind mount of the agents'
   * install folder): when one is not, AgentError says which and how to mount it.
   */
  static async create(spawn: SpawnFn, prefix: string, signal: AbortSignal, programs: string[] = []): Promise<AgentHome> {
    let out: string;
    try {
      out = await runHelper(spawn, `mktemp for ${prefix}`, 'sh', ['-c', CREATE_HOME, 'sh', prefix, ...programs], { signal, cwd: '/' });
    } catch (error) {
      const missing =
        error instanceof AgentError && error.message.endsWith(`exited with code ${PROGRAM_MISSING}`) ? error.detail?.trim().split('\n').at(-1) : undefined;
      if (!missing) throw error;
      throw new AgentError(
        `${prefix}: ${missing} exists on this host but not where the sandbox runs: with the container backend, mount the folder ` +
          `that holds it read-only at the same path (container.mounts: [{ source: '<folder>', target: '<same absolute path>' }], ` +
          `e.g. agentInstallMount() for scripts/install-agents.sh's .agents) — README "Agents inside the container sandbox"`,
        (error as AgentError).detail,
      );
    }
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
