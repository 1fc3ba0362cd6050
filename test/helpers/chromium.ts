import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium (`apt-get install -y chromium`), driven by playwright-core — never a browser
 * download. The flags keep it off the network: without the background-networking ones it keeps
 * trying to reach update and sync services.
 */
export const CHROMIUM = process.env.VERA_CHROMIUM ?? '/usr/bin/chromium';

/** Chromium is a documented prerequisite of the browser tests; CI installs it, so there it must exist. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs it with apt-get install -y chromium`);
  return false;
}

export async function launchChromium(): Promise<BrowserContext & { dispose(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'vera-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return Object.assign(context, {
    async dispose() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  });
}
