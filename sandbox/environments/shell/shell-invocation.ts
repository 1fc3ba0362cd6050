import type { Command, ExecResult, IFileSystem } from 'just-bash';

/**
 * How agents start a shell, made to work in the simulated one: `bash -lc '…'` (Codex runs every
 * command so), `sh -ec`, `/bin/bash -c`, `/usr/bin/env bash -c`. just-bash's own `bash` and `sh`
 * know `-c` but not the login and interactive flags, and it finds a command by an absolute path
 * only where a file stands there — so the run's file system gets `/bin` and `/usr/bin` entries for
 * every command it has (as a real system does), and `bash`/`sh` drop the flags that change
 * nothing here (`-l`, `-i`, `--login`, `--noprofile`, `--norc`) and turn `-e`/`-u`/`-x` into
 * `set -…` before the script.
 */

const IGNORED_LONG = new Set(['--login', '--noprofile', '--norc']);

/** The arguments as just-bash's `bash`/`sh` take them; undefined when nothing needs changing. */
export function normalizeShellArgs(args: readonly string[]): string[] | undefined {
  const out: string[] = [];
  const setFlags: string[] = [];
  let changed = false;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (IGNORED_LONG.has(arg)) {
      changed = true;
      continue;
    }
    if (!/^-[a-z]+$/.test(arg)) break;
    const letters = [...arg.slice(1)];
    if (letters.some((l) => !'licexu'.includes(l))) break;
    const kept = letters.filter((l) => l === 'c');
    setFlags.push(...letters.filter((l) => 'exu'.includes(l)));
    if (kept.length !== letters.length) changed = true;
    if (kept.length) out.push('-c');
  }
  const rest = args.slice(i);
  if (setFlags.length && out.includes('-c') && rest.length > 0) {
    rest[0] = `set -${setFlags.join('')}; ${rest[0]}`;
    changed = true;
  }
  return changed ? [...out, ...rest] : undefined;
}

function shellCommand(name: 'bash' | 'sh'): Command {
  return {
    name,
    async execute(args, ctx): Promise<ExecResult> {
      if (!ctx.origCommand) return { stdout: '', stderr: `${name}: not available\n`, exitCode: 127 };
      return ctx.origCommand(normalizeShellArgs(args) ?? args);
    },
  };
}

export const shellInvocationCommands: Command[] = [shellCommand('bash'), shellCommand('sh')];

/** `/bin/<name>` and `/usr/bin/<name>` for every command the shell has, so absolute paths resolve. */
export async function writeCommandEntries(fs: IFileSystem, names: readonly string[]): Promise<void> {
  for (const dir of ['/bin', '/usr/bin']) {
    await fs.mkdir(dir, { recursive: true });
    for (const name of names) await fs.writeFile(`${dir}/${name}`, `#!/bin/sh\n# ${name}: built into the simulated shell\n`);
  }
}
