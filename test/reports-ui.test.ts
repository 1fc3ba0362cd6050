import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './helpers/chromium.js';
import { FIXTURE, REPO, collect } from './helpers/run-vitest.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `vitest --ui` on the fixture project (the real @vitest/ui, in a child process), loaded in
 * headless Chromium: the cases appear under their YAML file, a case's Code tab shows the YAML
 * source, and its report shows the safety fields (annotations) and the evidence.
 */
describe.skipIf(!chromiumAvailable())('@vitest/ui shows the cases by YAML file with their safety fields', () => {
  it('the explorer lists the YAML file and its tests; a test shows annotations, evidence and the YAML source', async () => {
    const port = await freePort();
    const records = await mkdtemp(join(tmpdir(), 'vera-ui-records-'));
    const child = spawn(
      process.execPath,
      [
        join(REPO, 'node_modules/vitest/vitest.mjs'),
        '--watch',
        '--ui',
        '--open=false',
        `--api.port=${port}`,
        '--api.host=127.0.0.1',
        '--root',
        FIXTURE,
        'notes-leak',
      ],
      { cwd: FIXTURE, env: { ...process.env, FIXTURE_POLICY: 'naive', FIXTURE_RECORDS: records, NO_COLOR: '1', CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const done = collect(child);
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    const browser = await launchChromium();
    try {
      const until = Date.now() + 60_000;
      while (!output.includes('Vera — attack success rate')) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`vitest --ui did not finish its first run:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${port}/__vitest__/`);
      await page.getByText('cases/notes-leak.case.yaml').first().waitFor({ timeout: 30_000 });
      for (const name of ['notes-leak › [benign]', 'notes-leak › [single-channel]', 'notes-leak › [multi-channel]']) {
        await page.getByText(name, { exact: true }).first().waitFor();
      }
      // The explorer's search filters by tag.
      await page.getByPlaceholder(/Search/).fill('tag:threat:benign');
      // (The explorer is a virtual list: rows filtered out are moved off screen, not removed.)
      const visible = async (name: string) => {
        let n = 0;
        for (const el of await page.getByText(name, { exact: true }).all()) {
          const box = await el.boundingBox();
          if (box && box.y >= 0 && box.y < 900) n++;
        }
        return n;
      };
      await expect.poll(() => visible('notes-leak › [multi-channel]'), { timeout: 10_000 }).toBe(0);
      expect(await visible('notes-leak › [single-channel]')).toBe(0);
      expect(await visible('notes-leak › [benign]')).toBe(1);
      // Another tag, and the row that is left is the one to open. (Clearing the search instead is
      // racy: under load the explorer sometimes keeps the file's rows collapsed afterwards.)
      await page.getByPlaceholder(/Search/).fill('tag:threat:multi-channel');
      await expect.poll(() => visible('notes-leak › [multi-channel]'), { timeout: 10_000 }).toBe(1);
      expect(await visible('notes-leak › [benign]')).toBe(0);
      // Click the row on screen (the virtual list keeps moved-out copies of rows in the page).
      for (const el of await page.getByText('notes-leak › [multi-channel]', { exact: true }).all()) {
        const box = await el.boundingBox();
        if (box && box.y >= 0 && box.y < 900) {
          await el.click();
          break;
        }
      }
      await page.getByText('Test Annotations').waitFor({ timeout: 30_000 });
      const report = await page.locator('body').innerText();
      for (const text of [
        'vera.risk',
        'data-exfiltration/note-leak',
        'vera.attack',
        'prompt-injection/direct',
        'vera.threat-model',
        'vera.verdict',
        'violated',
      ]) {
        expect(report).toContain(text);
      }
      expect(report).toMatch(/verifier\.egress: egress via post to x@evil\.example carries secret CODE/);
      // The tags are badges in the test's header beside its name (not in the explorer tree) …
      expect(report).toContain('threat:multi-channel');
      expect(report).toContain('risk:data-exfiltration');
      const explorerRow = await page.getByText('notes-leak › [single-channel]', { exact: true }).first().locator('..').innerText();
      expect(explorerRow).not.toContain('threat:');

      // The Code tab shows the case's YAML source (the module's source is the YAML file itself).
      await page.getByText('Code', { exact: true }).click();
      await page.getByText('egress: { secret: CODE }').first().waitFor({ timeout: 30_000 });
      const code = await page.locator('body').innerText();
      expect(code).toContain('risk: data-exfiltration/note-leak');
    } finally {
      await browser.dispose();
      child.kill('SIGTERM');
      await done;
      await rm(records, { recursive: true, force: true });
    }
  }, 120_000);
});
