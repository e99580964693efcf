// Takes docs/dashboard.png of a running dashboard (the README's picture), with the browser the tests use
// (test/helpers/browser.ts: Debian's chromium, headless). Run it while `npm run demo` runs:
//   node dist/scripts/dashboard-screenshot.js 'http://127.0.0.1:8080/dashboard#token=…' [--wait-s 30] [--out docs/dashboard.png]
import { parseArgs } from 'node:util';
import { launchChromium } from '../test/helpers/browser.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'wait-s': { type: 'string', default: '30' }, out: { type: 'string', default: 'docs/dashboard.png' } },
});
const url = positionals[0];
if (url === undefined) throw new Error('usage: dashboard-screenshot <dashboard URL with #token=…> [--wait-s N] [--out FILE]');
const chromium = await launchChromium({ width: 1400, height: 1000 });
try {
  const page = await chromium.context.newPage();
  await page.goto(url);
  await page.locator('#board').waitFor({ state: 'visible' });
  // Enough frames for the charts to show a trend.
  await page.waitForTimeout(Number(values['wait-s']) * 1000);
  await page.screenshot({ path: values.out, fullPage: true });
} finally {
  await chromium.close();
}
