// Headless Chromium for the dashboard tests: Debian's `chromium` package (apt-get install chromium; .ci/run
// installs it), driven by playwright-core. Never a downloaded browser: where /usr/bin/chromium is missing
// the browser tests are skipped, and say so.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** A node:test `skip` option: false where the browser exists, else the reason shown in the test report. */
export const skipWithoutChromium: false | string = existsSync(CHROMIUM_PATH)
  ? false
  : `skipped: no ${CHROMIUM_PATH} (install Debian's chromium package: apt-get install -y chromium)`;

export interface TestBrowser {
  /** One browser profile: pages opened in it share cookies and storage, but sessionStorage is per tab. */
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A fresh profile each time (--user-data-dir, which playwright takes as launchPersistentContext's first
 * argument), and nothing the browser would fetch on its own (updates, sync, QUIC probes).
 */
export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  const profileDir = mkdtempSync(join(tmpdir(), 'parlayd-chromium-'));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport,
    timeout: 30_000,
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
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}
