import { lstatSync, readlinkSync } from 'node:fs';

/**
 * The one table of what of the host's system a bubblewrap sandbox sees, read-only: the system
 * directories (symlinked ones — a merged /usr — recreated as symlinks), and from /etc only what the
 * confined thing needs. Two users, one table:
 * - `shell`: a command of the shell environment (sandbox/environments/shell/bubblewrap-runner.ts) —
 *   it needs to start and find its alternatives, nothing more: no users, no hosts, no TLS roots (it
 *   has no network);
 * - `program`: a program under test and every command it runs (bubblewrap-program.ts) — it also
 *   resolves localhost, verifies TLS to the loopback bridge's ports, and looks up its user.
 * Neither ever sees /etc/shadow, the machine's secrets, a home directory or the repository.
 */
export const SYSTEM_PATHS: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

export type MountProfile = 'shell' | 'program';

const ETC_PATHS: ReadonlyArray<{ path: string; for: readonly MountProfile[] }> = [
  { path: '/etc/alternatives', for: ['shell', 'program'] },
  { path: '/etc/ld.so.cache', for: ['shell', 'program'] },
  { path: '/etc/ld.so.conf', for: ['shell', 'program'] },
  { path: '/etc/ld.so.conf.d', for: ['shell', 'program'] },
  { path: '/etc/ssl', for: ['program'] },
  { path: '/etc/ca-certificates', for: ['program'] },
  { path: '/etc/hosts', for: ['program'] },
  { path: '/etc/nsswitch.conf', for: ['program'] },
  { path: '/etc/passwd', for: ['program'] },
  { path: '/etc/group', for: ['program'] },
  { path: '/etc/localtime', for: ['program'] },
  { path: '/etc/os-release', for: ['program'] },
];

/** The /etc paths a profile gets. */
export function etcPaths(profile: MountProfile): string[] {
  return ETC_PATHS.filter((e) => e.for.includes(profile)).map((e) => e.path);
}

/** The bwrap arguments that mount the profile's system paths (those that exist on this host). */
export function systemMounts(profile: MountProfile): string[] {
  const args: string[] = [];
  for (const p of [...SYSTEM_PATHS, ...etcPaths(profile)]) {
    let stat;
    try {
      stat = lstatSync(p);
    } catch {
      continue;
    }
    // A symlinked system directory (/bin → usr/bin) is recreated as the link; a symlink in /etc
    // (/etc/localtime → the zone file) is bound, so its target is what the sandbox reads.
    if (stat.isSymbolicLink() && SYSTEM_PATHS.includes(p)) args.push('--symlink', readlinkSync(p), p);
    else args.push('--ro-bind', p, p);
  }
  return args;
}

/**
 * The namespaces and privileges both sandboxes drop, in one place: no network but its own
 * loopback, its own pids, ipc, hostname and (where allowed) user and cgroup namespaces, a new
 * session (no terminal to inject into), no capabilities, and death with the parent.
 */
export function isolationArgs(): string[] {
  return [
    '--unshare-user-try',
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'vera-sandbox',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
  ];
}
