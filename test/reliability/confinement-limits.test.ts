/**
 * Confined programs cannot take the machine down: a bubblewrap command (or CLI agent) runs in a
 * limit group — processes at once, memory, CPU seconds, file size (sandbox/confinement/
 * resource-limits.ts). Before, 6000 background processes were accepted, and an unconfined CLI's
 * setsid'd grandchildren outlived the run. Each attack is performed for real; the process count and
 * memory need a cgroup (root here and in CI), CPU time and file size hold everywhere.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LimitGroup } from '../../sandbox/confinement/resource-limits.js';
import { ProgramConfinement } from '../../sandbox/confinement/program-confinement.js';
import { createBubblewrapRunner } from '../../sandbox/environments/shell/bubblewrap-runner.js';
import { tempDir } from '../helpers/environment-harness.js';

const probe = LimitGroup.create();
const cgroups = probe.enforced.processes && probe.enforced.memory;
probe.close();
const bwrap =
  process.platform === 'linux' &&
  (Boolean(process.env.CI) ||
    (await createBubblewrapRunner()
      .check()
      .then(
        () => true,
        () => false,
      )));

/** A `sleep` duration no other process on the machine has: it marks the processes a test starts. */
let marks = 0;
function uniqueSleep(): string {
  return `${300 + (process.pid % 500)}.${String(++marks).padStart(3, '0')}${Date.now() % 1000}`;
}

/** Processes whose command line contains `marker` (this machine's /proc). */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

describe('limit groups', () => {
  it('CPU seconds and file size hold everywhere: a busy loop is stopped, a large file is cut', () => {
    const group = LimitGroup.create({ processes: 64, memoryMB: 256, cpuSeconds: 1, fileSizeMB: 1 });
    try {
      const started = Date.now();
      const busy = group.wrap(['/bin/sh', '-c', 'while :; do :; done']);
      const r = spawnSync(busy[0]!, busy.slice(1), { timeout: 30_000 });
      // At the soft limit SIGXCPU, at the hard one (dash sets both) SIGKILL.
      expect(['SIGXCPU', 'SIGKILL']).toContain(r.signal);
      expect(Date.now() - started).toBeLessThan(15_000);
      const big = group.wrap(['/bin/sh', '-c', 'head -c 5000000 /dev/zero > "$0"; echo $?', `/tmp/vera-limit-${process.pid}`]);
      const w = spawnSync(big[0]!, big.slice(1), { encoding: 'utf8' });
      expect(readFileSync(`/tmp/vera-limit-${process.pid}`).length).toBeLessThanOrEqual(1024 * 1024);
      void w;
    } finally {
      group.close();
      spawnSync('rm', ['-f', `/tmp/vera-limit-${process.pid}`]);
    }
  });

  it.runIf(cgroups)('with a cgroup: a fork bomb stops at the process limit, and closing the group ends what it left', () => {
    const group = LimitGroup.create({ processes: 64, memoryMB: 256, cpuSeconds: 60, fileSizeMB: 16 });
    const marker = uniqueSleep();
    try {
      const bomb = group.wrap(['/bin/sh', '-c', `i=0; while [ $i -lt 3000 ]; do sleep ${marker} 2>/dev/null & i=$((i+1)); done`]);
      spawnSync(bomb[0]!, bomb.slice(1), { timeout: 60_000, stdio: 'ignore' });
      const alive = processesWith(marker).length;
      expect(alive).toBeGreaterThan(0);
      expect(alive).toBeLessThanOrEqual(64);
    } finally {
      group.close();
    }
    expect(processesWith(marker)).toEqual([]);
  });

  it.runIf(cgroups)('with a cgroup: an allocation loop is stopped at the memory limit', () => {
    const group = LimitGroup.create({ processes: 64, memoryMB: 128, cpuSeconds: 60, fileSizeMB: 16 });
    try {
      const hog = group.wrap([process.execPath, '-e', 'const a = []; for (;;) a.push(Buffer.alloc(16 << 20, 1));']);
      const r = spawnSync(hog[0]!, hog.slice(1), { timeout: 60_000 });
      // Killed by the kernel's OOM killer (SIGKILL), or aborted by V8 when an allocation failed.
      expect(r.status === 0).toBe(false);
      expect(['SIGKILL', 'SIGABRT', null]).toContain(r.signal);
    } finally {
      group.close();
    }
  });
});

describe.runIf(bwrap && cgroups)('the bubblewrap shell, limited', () => {
  it('6000 background processes are not accepted: the command fails at the limit and nothing is left running', async () => {
    const workspace = await tempDir('vera-limits-');
    const marker = uniqueSleep();
    const runner = createBubblewrapRunner({ limits: { processes: 128 } });
    const r = await runner.run({ command: `for i in $(seq 1 6000); do sleep ${marker} & done; wait`, workspace, timeoutMs: 60_000, maxOutputBytes: 10_000 });
    expect(r.stderr).toMatch(/fork|Resource temporarily unavailable/i);
    expect(processesWith(marker)).toEqual([]);
  }, 120_000);
});

describe.runIf(cgroups)('unconfined programs', () => {
  it('a program that setsid-forks a daemon and exits leaves nothing behind once it has exited', async () => {
    const workspace = await tempDir('vera-unconfined-');
    const marker = uniqueSleep();
    const confinement = new ProgramConfinement({ mode: 'unconfined', workspace: () => workspace });
    try {
      const child = confinement.spawn('/bin/sh', ['-c', `setsid sh -c 'sleep ${marker}' </dev/null >/dev/null 2>&1 & sleep 0.2; exit 0`]);
      await new Promise((resolve) => child.once('exit', resolve));
      // The daemon ran (its own session, re-parented): the group found it anyway.
      for (let i = 0; i < 50 && processesWith(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(processesWith(marker)).toEqual([]);
    } finally {
      confinement.dispose();
    }
  });

  it('the probe can fail: the same daemon started without a limit group outlives its parent', async () => {
    const marker = uniqueSleep();
    spawnSync('/bin/sh', ['-c', `setsid sh -c 'sleep ${marker}' </dev/null >/dev/null 2>&1 & sleep 0.2; exit 0`]);
    expect(processesWith(marker).length).toBeGreaterThan(0);
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  });
});
