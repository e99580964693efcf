// The dashboard page in a real browser (Debian's chromium, headless, driven by playwright-core) against the
// real server with RFQs flowing through real maker sockets: it refuses a wrong token, keeps the right one in
// the tab's sessionStorage only, shows figures that change while RFQs flow, and its charts draw (canvas
// pixels in the series' colours, not just elements). Skipped, saying why, where no chromium is installed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium, type TestBrowser } from '../helpers/browser.js';
import { startRfqFlow } from '../helpers/dashboard.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';

// The functions given to page.evaluate/waitForFunction run in the browser (playwright sends their source).
// This program is compiled without the DOM's types, so the few browser globals they touch are declared here.
interface PageElement {
  textContent: string | null;
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { length: number };
  cookie: string;
};
declare const sessionStorage: { length: number; getItem(key: string): string | null };
declare const localStorage: { length: number };

/** The colours dashboard.js gives the series: completed RFQs, and p50 latency. */
const COMPLETED_RGB = [0x5e, 0xc4, 0xb6] as const;
const P99_RGB = [0xe7, 0x6f, 0x51] as const;

/** Pixels of the chart's canvas within a small distance of `rgb` (uPlot antialiases its lines). */
function countPixelsOf(page: Page, chartId: string, rgb: readonly [number, number, number]): Promise<number> {
  return page.evaluate(
    ([id, [r, g, b]]) => {
      const canvas = document.querySelector(`#${id} canvas`);
      if (canvas === null) return -1;
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3]! > 200 && Math.abs(data[i]! - r) < 24 && Math.abs(data[i + 1]! - g) < 24 && Math.abs(data[i + 2]! - b) < 24)
          count++;
      }
      return count;
    },
    [chartId, rgb] as const,
  );
}

const textOf = (page: Page, selector: string) => page.locator(selector).innerText();

describe('dashboard page in headless chromium', { skip: skipWithoutChromium }, () => {
  let server: TestServer;
  let chromium: TestBrowser;

  before(async () => {
    // One after the other: a server started beside a launch that failed would be left running.
    server = await startServer();
    chromium = await launchChromium();
  });
  after(async () => {
    await chromium?.close();
    await server?.stop();
    if (server !== undefined) removeDataDir(server);
  });

  it('refuses a wrong token: says so, shows no figures, keeps nothing', async () => {
    const page = await chromium.context.newPage();
    await page.goto(`${server.baseUrl}/dashboard`);
    await page.fill('#token', 'wrong-token-0123456789');
    await page.click('#login button[type=submit]');
    await page.locator('#auth-error').waitFor({ state: 'visible' });
    assert.equal(await textOf(page, '#auth-error'), 'That token was refused: it is not the admin token.');
    assert.equal(await page.locator('#board').isHidden(), true);
    assert.equal(
      await page
        .locator('#v-ended')
        .innerText({ timeout: 1_000 })
        .catch(() => '—'),
      '—',
    );
    assert.deepEqual(await page.evaluate(() => [sessionStorage.length, localStorage.length]), [0, 0]);
    await page.close();
  });

  it("takes the token from the URL's fragment (npm run demo prints one) and removes it from the address", async () => {
    const page = await chromium.context.newPage();
    await page.goto(`${server.baseUrl}/dashboard#token=${server.adminToken}`);
    await page.locator('#board').waitFor({ state: 'visible' });
    assert.equal(page.url(), `${server.baseUrl}/dashboard`);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('parlayd.adminToken')), server.adminToken);
    await page.close();
  });

  it('with the admin token: live figures change while RFQs flow, and the charts draw', async () => {
    const page = await chromium.context.newPage();
    await page.goto(`${server.baseUrl}/dashboard`);
    await page.fill('#token', server.adminToken);
    await page.click('#login button[type=submit]');
    await page.locator('#board').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#login').isHidden(), true, 'the token form stays on screen');
    // The token: in this tab's sessionStorage only, and in no URL the page used.
    assert.deepEqual(await page.evaluate(() => [sessionStorage.getItem('parlayd.adminToken'), localStorage.length, document.cookie]), [
      server.adminToken,
      0,
      '',
    ]);
    assert.ok(!page.url().includes(server.adminToken));
    await page.waitForFunction(() => document.querySelector('#v-ended')!.textContent === '0');

    const flow = await startRfqFlow(server);
    try {
      const endedWhen = async (atLeast: number) => {
        await page.waitForFunction((n) => Number(document.querySelector('#v-ended')!.textContent!.replace(/,/g, '')) >= n, atLeast, {
          timeout: 15_000,
        });
        return Number((await textOf(page, '#v-ended')).replace(/,/g, ''));
      };
      const first = await endedWhen(1);
      const later = await endedWhen(first + 3);
      assert.ok(later > first, `${first} then ${later}`);
      // A frame with the flow running: a rate above 0, two quotes an RFQ, a latency, two makers listed.
      await page.waitForFunction(() => Number(document.querySelector('#v-created-rate')!.textContent) > 0, undefined, { timeout: 10_000 });
      await page.waitForFunction(() => document.querySelector('#v-quotes-per-rfq')!.textContent === '2.00', undefined, { timeout: 10_000 });
      assert.match(await textOf(page, '#v-latency'), /^\d+ \/ \d+$/);
      assert.equal(await page.locator('#makers tbody tr').count(), 2);
      assert.equal(await textOf(page, '#v-makers'), '2');
      // The open interest comes from the ledger check, which has not run: a dash, not 0.
      assert.equal(await textOf(page, '#v-open-interest'), '—');
      // Charts: lines drawn in the series' colours, on the canvas.
      await page.waitForFunction(() => document.querySelectorAll('#chart-rates canvas').length === 1, undefined, { timeout: 5_000 });
      await page.waitForTimeout(1_200); // at least two points on each line
      assert.ok((await countPixelsOf(page, 'chart-rates', COMPLETED_RGB)) > 30, 'the completed-RFQs line is not drawn');
      assert.ok((await countPixelsOf(page, 'chart-latency', P99_RGB)) > 30, 'the p99 latency line is not drawn');
    } finally {
      await flow.stop();
    }
    await page.close();
  });
});
