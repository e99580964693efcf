// The feeder (scripts/oracle-feed.ts, `npm run oracle:feed`) run briefly against the real service: its signed
// reports are accepted and a window resolves from them; a generated key is printed once as a dev key with
// the PARLAYD_ORACLE_ADDRESSES line; SIGTERM stops it cleanly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { verifyMessage } from 'ethers';
import { oracleKeyFromHex, randomOracleKey, signOracleReport } from '../../src/oracle/report-signer.js';
import { oracleReportBytes } from '../../src/oracle/signing.js';
import { alignedTsMs, nextPriceE8 } from '../../scripts/oracle-feed.js';
import { waitForMarket, windowMarket } from '../helpers/oracle.js';
import { repoRoot } from '../helpers/paths.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';

const feedScript = resolve(repoRoot, 'dist/scripts/oracle-feed.js');

function runFeed(args: string[], env: Record<string, string>, onStarted?: (stop: () => void) => void) {
  const child = spawn(process.execPath, [feedScript, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let notifyFirstLine: () => void = () => {};
  const firstLine = new Promise<void>((r) => (notifyFirstLine = r));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stdout.includes('\n')) notifyFirstLine();
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  onStarted?.(() => child.kill('SIGTERM'));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.once('close', (code) => done({ code, stdout, stderr })),
  );
  return { firstLine, exited };
}

describe('the feeder pieces', () => {
  it("signs what ethers verifies as the key's address", () => {
    const key = randomOracleKey();
    const report = { asset: 'BTC', tsMs: 1_764_107_000_000, priceE8: 9_000_000_000_000 };
    const sig = Buffer.from(signOracleReport(key, report), 'base64');
    assert.equal(sig.length, 65);
    assert.equal(verifyMessage(oracleReportBytes(report), '0x' + sig.toString('hex')).toLowerCase(), key.address);
    assert.equal(oracleKeyFromHex('0x' + Buffer.from(key.privateKey).toString('hex')).address, key.address);
    assert.throws(() => oracleKeyFromHex('0x1234'), RangeError);
  });

  it('aligns report times to the interval and walks integer prices of at least 1', () => {
    assert.equal(alignedTsMs(1_764_107_123_456, 1_000), 1_764_107_123_000);
    assert.equal(alignedTsMs(1_764_107_123_000, 250), 1_764_107_123_000);
    assert.equal(nextPriceE8(100, 0), 100);
    assert.ok(Number.isSafeInteger(nextPriceE8(9_000_000_000_000, 1.3)));
    assert.equal(nextPriceE8(1, -1e9), 1);
  });
});

describe('npm run oracle:feed against a running service', () => {
  const key = randomOracleKey();
  let server: TestServer;

  before(async () => {
    server = await startServer({
      env: { PARLAYD_ORACLE_ADDRESSES: key.address, PARLAYD_PRICE_ASSETS: 'BTC,ETH', PARLAYD_PRICE_DURATIONS_SECS: '1' },
    });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('pushes signed reports at each boundary, and the window they span resolves by the oracle', async () => {
    const feed = runFeed(['--url', server.baseUrl, '--assets', 'BTC,ETH', '--interval-ms', '250', '--seconds', '4'], {
      PARLAYD_ORACLE_KEY: '0x' + Buffer.from(key.privateKey).toString('hex'),
    });
    // A window that starts after the feed's first report, so its start price is a report of this feed.
    await feed.firstLine;
    const window = await windowMarket(server, 'BTC', 1, Date.now() + 1_000);
    const result = await feed.exited;
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stderr.includes('DEV KEY'), 'a key from the environment is never printed');
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.length >= 8, `${lines.length} batches in 4 s at 250 ms`);
    for (const line of lines) assert.deepEqual([line['status'], line['accepted'], line['rejected']], [200, 2, []]);
    const market = await waitForMarket(server, window.market_id, (m) => m['status'] !== 'OPEN', 2_000);
    assert.equal(market['resolved_by'], 'oracle');
    assert.match(String(market['start_price_e8']), /^[0-9]+$/);
    assert.match(String(market['end_price_e8']), /^[0-9]+$/);
  });

  it('without PARLAYD_ORACLE_KEY prints a generated dev key once with the address line, and stops cleanly on SIGTERM', async () => {
    const result = await runFeed(['--url', server.baseUrl, '--assets', 'BTC', '--interval-ms', '100'], {}, (stop) =>
      setTimeout(stop, 1_000),
    ).exited;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr.match(/DEV KEY/g)?.length, 1);
    const printedKey = /PARLAYD_ORACLE_KEY=(0x[0-9a-f]{64})/.exec(result.stderr)?.[1];
    const printedAddress = /PARLAYD_ORACLE_ADDRESSES=(0x[0-9a-fA-F]{40})/.exec(result.stderr)?.[1];
    assert.ok(printedKey !== undefined && printedAddress !== undefined, result.stderr);
    assert.equal(oracleKeyFromHex(printedKey).address, printedAddress.toLowerCase());
    // The service does not know that key: its reports are refused, as they should be.
    const first = JSON.parse(result.stdout.split('\n')[0]!) as { rejected: { code: string }[] };
    assert.deepEqual(first.rejected, [{ index: 0, code: 'ORACLE_SIGNER_UNKNOWN' }]);
  });
});
