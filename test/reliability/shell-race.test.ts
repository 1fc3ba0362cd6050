/**
 * The shell against a program that flips a symlink in the workspace while commands run (every
 * confined CLI agent can write the workspace; so can a helper process it starts). `/flip` is,
 * now a folder of the workspace, now a symlink to a host folder holding a secret. The simulated
 * shell goes through the files environment's descriptor-based layer; the bubblewrap shell sees no
 * host folder at all. Before, just-bash resolved a path and opened it by name: 26–103 of 450 `cat`
 * calls returned the host secret and 1–7 of 450 writes landed outside, with a `safe` verdict —
 * the baseline below runs just-bash's own file system against the same flipper and shows the probe
 * catches that.
 */
import { lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBubblewrapRunner } from '../../sandbox/environments/shell/bubblewrap-runner.js';
import type { ShellRunner } from '../../sandbox/environments/shell/runner.js';
import { createSimulatedShellRunner } from '../../sandbox/environments/shell/simulated-runner.js';
import { removeTempDirs, tempDir } from '../helpers/environment-harness.js';
import { startExchange, stopFlippers } from '../helpers/symlink-flipper.js';

const ATTEMPTS = 2000;

afterEach(async () => {
  await stopFlippers();
  await removeTempDirs();
});

/**
 * A workspace where `/flip` is, now the folder `inside`, now a symlink to a host folder holding a
 * secret: the directory and a link are exchanged atomically (renameat2), over and over — a
 * component swapped between a check and a use. The files of the inside folder are counted where
 * they are, whichever name it has at the moment.
 */
async function flippingWorkspace() {
  const workspace = await tempDir('vera-shell-race-');
  const outside = await tempDir('vera-outside-');
  const outsideMarker = `OUTSIDE-${Math.random().toString(36).slice(2)}`;
  const insideMarker = `inside-${Math.random().toString(36).slice(2)}`;
  writeFileSync(join(outside, 'secret.txt'), outsideMarker);
  mkdirSync(join(workspace, 'flip'));
  writeFileSync(join(workspace, 'flip', 'secret.txt'), insideMarker);
  symlinkSync(outside, join(workspace, 'flip-out'));
  await startExchange(join(workspace, 'flip'), join(workspace, 'flip-out'));
  return { workspace, outside, outsideMarker, insideMarker };
}

/** The workspace's own folder of the pair, whichever name it has now. */
function insideFolder(workspace: string): string {
  return lstatSync(join(workspace, 'flip')).isDirectory() ? join(workspace, 'flip') : join(workspace, 'flip-out');
}

interface Race {
  reads: { inside: number; escaped: number; refused: number };
  writes: { inside: number; escaped: number; refused: number };
}

/** `cat` and a redirect through the flipping link, ATTEMPTS of each, with `runner`. */
async function race(runner: ShellRunner, workspaceInShell: string): Promise<Race> {
  const { workspace, outside, outsideMarker, insideMarker } = await flippingWorkspace();
  const run = (command: string) => runner.run({ command, workspace, timeoutMs: 10_000, maxOutputBytes: 10_000 });
  const reads = { inside: 0, escaped: 0, refused: 0 };
  for (let i = 0; i < ATTEMPTS; i++) {
    const r = await run(`cat ${workspaceInShell}/flip/secret.txt`);
    if (r.stdout.includes(outsideMarker)) reads.escaped++;
    else if (r.stdout.includes(insideMarker)) reads.inside++;
    else reads.refused++;
  }
  const writes = { inside: 0, escaped: 0, refused: 0 };
  for (let i = 0; i < ATTEMPTS; i++) {
    const r = await run(`echo x > ${workspaceInShell}/flip/created-${i}.txt`);
    if (r.exitCode !== 0) writes.refused++;
  }
  writes.escaped = readdirSync(outside).filter((n) => n !== 'secret.txt').length;
  await stopFlippers();
  writes.inside = readdirSync(insideFolder(workspace)).filter((n) => n.startsWith('created-')).length;
  // No write went anywhere else in the workspace either (no temp files left beside them).
  const stray = readdirSync(workspace).filter((n) => !['flip', 'flip-out'].includes(n));
  expect(stray).toEqual([]);
  runner.release?.(workspace);
  return { reads, writes };
}

describe.runIf(process.platform === 'linux')('the shell against symlink flipping', () => {
  it(`simulated shell: ${ATTEMPTS} cat and ${ATTEMPTS} redirects through a flipping symlink, 0 escapes`, async () => {
    const { reads, writes } = await race(createSimulatedShellRunner(), '/workspace');
    console.log(`simulated shell: reads ${JSON.stringify(reads)}, writes ${JSON.stringify(writes)}`);
    expect(reads.escaped).toBe(0);
    expect(writes.escaped).toBe(0);
    // The flipping happened: both ways were met.
    expect(reads.inside).toBeGreaterThan(0);
    expect(reads.refused).toBeGreaterThan(0);
    expect(writes.inside).toBeGreaterThan(0);
    expect(writes.refused).toBeGreaterThan(0);
  }, 300_000);

  it("the probe can fail: just-bash's own ReadWriteFs (resolve, then open by name) escapes through the same link", async () => {
    const { Bash, ReadWriteFs } = await import('just-bash');
    const baseline: ShellRunner = {
      name: 'baseline',
      async check() {},
      async run(request) {
        const bash = new Bash({ fs: new ReadWriteFs({ root: request.workspace, allowSymlinks: true }), cwd: '/' });
        let r: { stdout: string; stderr: string; exitCode: number };
        try {
          r = await bash.exec(request.command);
        } catch (error) {
          r = { stdout: '', stderr: String(error), exitCode: 2 };
        }
        return { cwd: '/', exitCode: r.exitCode, signal: null, stdout: r.stdout, stderr: r.stderr, timedOut: false, truncated: false, durationMs: 0 };
      },
    };
    const { workspace, outside, outsideMarker } = await flippingWorkspace();
    let escaped = 0;
    for (let i = 0; i < ATTEMPTS && escaped === 0; i++) {
      const r = await baseline.run({ command: 'cat /flip/secret.txt', workspace, timeoutMs: 10_000, maxOutputBytes: 10_000 });
      if (r.stdout.includes(outsideMarker)) escaped++;
    }
    for (let i = 0; i < ATTEMPTS && readdirSync(outside).length === 1; i++) {
      await baseline.run({ command: `echo x > /flip/created-${i}.txt`, workspace, timeoutMs: 10_000, maxOutputBytes: 10_000 });
    }
    const escapedWrites = readdirSync(outside).filter((n) => n !== 'secret.txt').length;
    console.log(`just-bash ReadWriteFs (baseline): read escaped ${escaped > 0}, writes outside ${escapedWrites}`);
    expect(escaped + escapedWrites).toBeGreaterThan(0);
  }, 300_000);
});

describe.runIf(
  process.platform === 'linux' &&
    (process.env.CI ||
      (await createBubblewrapRunner()
        .check()
        .then(
          () => true,
          () => false,
        ))),
)('the bubblewrap shell against symlink flipping', () => {
  it(`bubblewrap shell: ${ATTEMPTS} cat and ${ATTEMPTS} redirects through a flipping symlink, 0 escapes`, async () => {
    const { reads, writes } = await race(createBubblewrapRunner(), '.');
    console.log(`bubblewrap shell: reads ${JSON.stringify(reads)}, writes ${JSON.stringify(writes)}`);
    expect(reads.escaped).toBe(0);
    expect(writes.escaped).toBe(0);
    expect(reads.inside).toBeGreaterThan(0);
    expect(writes.inside).toBeGreaterThan(0);
  }, 900_000);
});
