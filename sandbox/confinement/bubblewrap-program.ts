import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, sep } from 'node:path';
import { isolationArgs, SYSTEM_PATHS, systemMounts } from './system-mounts.js';

/**
 * Confines a program under test (a CLI agent and every shell command it runs) with bubblewrap:
 * a read-only view of the system directories and of the program's own install folder, the run's
 * workspace and a private scratch directory (its `/tmp`, where its home lives) as the only
 * writable places, nothing else of the host's files (no home directories, no repository, no
 * `/etc/shadow`), a fresh pid/ipc/uts namespace, no capabilities — and no network but the host
 * loopback ports the run allows, relayed through `LoopbackBridge` by a forwarder that runs first
 * inside the sandbox.
 */

/** Where the bridge's sockets appear inside the sandbox. */
export const BRIDGE_MOUNT = '/run/vera-bridge';

/** Whether `path` is already visible through the read-only system mounts. */
function underSystem(path: string): boolean {
  return SYSTEM_PATHS.some((s) => path === s || path.startsWith(`${s}/`));
}

/**
 * The folder to make readable for a program at `file`: nothing for system programs, the
 * `node_modules` folder it was installed into for npm-installed CLIs (never the project that
 * holds that folder), else the directory of its real file.
 */
export function programRoot(file: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return undefined;
  }
  if (underSystem(real)) return undefined;
  const at = real.indexOf(`${sep}node_modules${sep}`);
  if (at >= 0) return real.slice(0, at + `${sep}node_modules`.length);
  // `<prefix>/bin/tool` (a virtualenv, /opt/<tool>/bin): the prefix holds its libraries.
  const dir = dirname(real);
  return dir.endsWith(`${sep}bin`) ? dirname(dir) : dir;
}

/**
 * The folder to make readable for the interpreter a script names on its `#!` line, when it is
 * outside the system folders: a virtualenv's `bin/python` links to a Python installed elsewhere
 * (pyenv, /opt), which the confined program cannot start without. `#!/usr/bin/env x` is resolved
 * by PATH inside the sandbox, where only the system folders are: nothing to add.
 */
export function interpreterRoot(file: string): string | undefined {
  let head = '';
  try {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(256);
      head = buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const interpreter = /^#!\s*(\S+)/.exec(head)?.[1];
  return interpreter?.startsWith('/') ? programRoot(interpreter) : undefined;
}

/**
 * Runs inside the sandbox before the program: listens on 127.0.0.1 (and ::1) at each allowed
 * port, relays every connection to the bridge socket of that port, then starts the program with
 * the same stdio and exits as it exits. argv: bridge dir, ports (comma-separated), `--`, program, args.
 */
const FORWARDER = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [dir, list, , command, ...args] = process.argv.slice(1);
const ports = list.split(',').filter(Boolean).map(Number);
let pending = 0;
function relay(inner, port) {
  const outer = net.connect(dir + '/' + port + '.sock');
  const drop = () => { inner.destroy(); outer.destroy(); };
  inner.on('error', drop).on('close', drop);
  outer.on('error', drop).on('close', drop);
  inner.pipe(outer);
  outer.pipe(inner);
}
function start() {
  const child = spawn(command, args, { stdio: 'inherit' });
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('error', (e) => { process.stderr.write(command + ': ' + e.message + '\\n'); process.exit(127); });
  child.on('exit', (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    else process.exit(code ?? 1);
  });
}
for (const port of ports) {
  for (const host of ['127.0.0.1', '::1']) {
    pending++;
    const server = net.createServer((c) => relay(c, port));
    server.on('error', () => { if (--pending === 0) start(); });
    server.listen(port, host, () => { if (--pending === 0) start(); });
  }
}
if (ports.length === 0) start();
`;

export interface BubblewrapProgram {
  command: string;
  args: string[];
  /** Working directory inside the sandbox: the workspace, `/` or `/tmp`. */
  cwd: string;
  /** Host path of the run's workspace, bound writable at the same path. */
  workspace: string;
  /** Host directory bound writable as the program's `/tmp` (its home lives there, across the session's programs). */
  scratch: string;
  /** Host directory of the bridge sockets. */
  bridgeDir: string;
  /** Loopback ports the program may reach. */
  ports: number[];
  /** Host paths bound read-only at the same path (the program's install folder). */
  readOnly: string[];
  /** The node that runs the forwarder (default: this process's). */
  node?: string;
}

/** The bwrap argument list for one confined program. */
export function bubblewrapProgramArgs(p: BubblewrapProgram): string[] {
  const node = p.node ?? process.execPath;
  const nodeRoot = underSystem(node) ? undefined : dirname(dirname(realpathSync(node)));
  const readOnly = [...new Set([...p.readOnly, ...(nodeRoot ? [nodeRoot] : [])])].filter((path) => !underSystem(path));
  const inner = p.ports.length > 0 ? [node, '-e', FORWARDER, BRIDGE_MOUNT, p.ports.join(','), '--', p.command, ...p.args] : [p.command, ...p.args];
  return [
    '--dir',
    '/etc',
    ...systemMounts('program'),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--bind',
    p.scratch,
    '/tmp',
    '--bind',
    p.workspace,
    p.workspace,
    ...(p.ports.length > 0 ? ['--ro-bind', p.bridgeDir, BRIDGE_MOUNT] : []),
    ...readOnly.flatMap((path) => ['--ro-bind', path, path]),
    '--remount-ro',
    '/',
    '--chdir',
    p.cwd,
    ...isolationArgs(),
    '--',
    ...inner,
  ];
}

let probe: string | undefined | null = null;

/**
 * Why programs cannot be confined here (bubblewrap missing, or not allowed to create its
 * namespaces), or undefined when they can. Checked once per process (synchronously: `spawn`
 * must return its child at once).
 */
export function bubblewrapUnavailable(bwrap = 'bwrap'): string | undefined {
  if (probe !== null && bwrap === 'bwrap') return probe;
  const result = spawnSync(bwrap, ['--ro-bind', '/', '/', '--unshare-net', '--unshare-pid', '--die-with-parent', '--', '/bin/true'], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  let reason: string | undefined;
  if (result.error)
    reason =
      (result.error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `bubblewrap (${bwrap}) is not installed`
        : `bubblewrap (${bwrap}) could not start: ${result.error.message}`;
  else if (result.status !== 0)
    reason = `bubblewrap (${bwrap}) cannot create its sandbox here (${result.stderr.trim().split('\n')[0] || `exit code ${result.status}`})`;
  if (bwrap === 'bwrap') probe = reason;
  return reason;
}
