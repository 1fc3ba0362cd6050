import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../sandbox/container/image.js';
import type { CliCommand, CliIO } from '../main.js';

/**
 * Commands that run a script the package ships (scripts/), so an installed vera-safety can do
 * what this repository's scripts do: build the sandbox image, install the agent CLIs. They run
 * in the caller's directory (where `.agents/` belongs) with the terminal attached.
 */
function runPackageScript(script: string, args: string[], io: CliIO): Promise<number> {
  const file = join(packageRoot(), 'scripts', script);
  if (!existsSync(file)) {
    io.err(`${file} is missing from this installation of vera-safety`);
    return Promise.resolve(1);
  }
  return new Promise((resolve) => {
    const child = spawn('bash', [file, ...args], { cwd: io.cwd, stdio: 'inherit' });
    child.on('error', (error) => {
      io.err(`could not run bash: ${error.message} (these commands need bash, on Linux or macOS)`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

export const sandboxImageCommand: CliCommand = {
  name: 'sandbox-image',
  summary: 'build the container sandbox image from this machine (no registry needed)',
  usage: 'vera sandbox-image   (needs a Docker engine; VERA_SANDBOX_IMAGE overrides the tag)',
  run: (args, io) => runPackageScript('build-sandbox-image.sh', args, io),
};

export const installAgentsCommand: CliCommand = {
  name: 'install-agents',
  summary: 'install the pinned agent CLIs (codex, claude-code, openclaw, opencode) into ./.agents',
  usage: 'vera install-agents [codex] [claude-code] [openclaw] [opencode] [gemini-cli] [hermes]   (default: all; VERA_AGENTS_DIR overrides the folder)',
  run: (args, io) => runPackageScript('install-agents.sh', args, io),
};
