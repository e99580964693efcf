// A crash between the deciding report and the settlement (contract section 12: "survives a restart"): the
// report is durable before its 200; a start resolves every window whose prices are final, and the resolution
// settles the position then, once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client } from '../helpers/http.js';
import { connectNewMaker } from '../helpers/makers.js';
import { getMarket, postAdminReports, waitForMarket, windowMarket } from '../helpers/oracle.js';
import { autoQuote, balanceOf, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';
import { openStore } from '../../src/store/db.js';
import { OraclePrices } from '../../src/oracle/prices.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FUNDS_MICROS = 50_000_000;
const WAGER_MICROS = 4_000_000;

describe('a SIGKILL between the deciding report and the settlement', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({
      env: { PARLAYD_PRICE_ASSETS: 'BTC,ETH', PARLAYD_PRICE_DURATIONS_SECS: '2', PARLAYD_QUOTE_WINDOW_MS: '100' },
    });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  /** A taker with a filled `up` position (odds 2.5) on the 2 s window of `asset` starting next, its start price reported. */
  async function positionOnNextWindow(asset: string): Promise<{ taker: TestUser; window: Awaited<ReturnType<typeof windowMarket>> }> {
    const maker = await connectNewMaker(server);
    autoQuote(maker, { odds: 2.5 });
    const taker = await loginWallet(server);
    await credit(server, taker.address, FUNDS_MICROS);
    if (Date.now() % 2_000 > 500) await sleep(2_000 - (Date.now() % 2_000) + 10);
    const window = await windowMarket(server, asset, 2, Date.now());
    assert.equal((await postAdminReports(server, [{ asset, ts_ms: window.window_start_ms, price_e8: 100 }])).body.accepted, 1);
    const rfq = await client(server.baseUrl, taker.token).post(
      '/v1/rfq/unsigned?wait_ms=3000',
      unsignedBody([{ market_id: window.market_id, direction: 'up' }], { wager_micros: WAGER_MICROS }),
    );
    assert.equal(rfq.body.status, 'completed', JSON.stringify(rfq.body));
    await maker.close();
    await sleep(Math.max(0, window.window_end_ms - Date.now()) + 5);
    return { taker, window };
  }

  const WON = { available: BigInt(FUNDS_MICROS - WAGER_MICROS + 10_000_000), reserved: 0n, atRisk: 0n };

  it('the deciding report durable and the window unresolved (the state a kill right after the commit leaves): the next start resolves and settles it', async () => {
    const { taker, window } = await positionOnNextWindow('BTC');
    await server.kill();
    // The deciding report, written by the same code the route's transaction runs, while the service is down:
    // exactly what is durable when a SIGKILL lands after the report's commit and before the resolution's.
    const store = openStore(server.dataDir);
    try {
      const prices = new OraclePrices(store, ['BTC']);
      const outcomes = await prices.storeBatch(
        [{ index: 0, asset: 'BTC', tsMs: window.window_end_ms, priceE8: 101n, source: 'admin' }],
        Date.now(),
      );
      assert.deepEqual(outcomes, ['accepted']);
    } finally {
      await store.close();
    }
    server = await restartServer(server);
    const market = await waitForMarket(server, window.market_id, (m) => m['status'] !== 'OPEN', 2_000);
    assert.deepEqual(
      [market['outcome'], market['resolved_by'], market['start_price_e8'], market['end_price_e8']],
      ['YES', 'oracle', '100', '101'],
    );
    // The market is visible as resolved once its transaction commits; the settlement's commits follow.
    await waitFor(async () => assert.deepEqual(await balanceOf(server, taker), WON), { timeoutMs: 2_000, what: "the taker's winnings" });
    // Once: another restart pays nothing twice.
    await server.stop();
    server = await restartServer(server);
    assert.deepEqual(await balanceOf(server, taker), WON);
  });

  it('a SIGKILL as soon as the deciding report is answered: after the restart the window is resolved and paid once', async () => {
    const { taker, window } = await positionOnNextWindow('ETH');
    const res = await postAdminReports(server, [{ asset: 'ETH', ts_ms: window.window_end_ms, price_e8: 101 }]);
    assert.equal(res.body.accepted, 1);
    await server.kill();
    server = await restartServer(server);
    await waitForMarket(server, window.market_id, (m) => m['status'] === 'RESOLVED', 2_000);
    assert.equal((await getMarket(server, window.market_id)).body.market.outcome, 'YES');
    await waitFor(async () => assert.deepEqual(await balanceOf(server, taker), WON), { timeoutMs: 2_000, what: "the taker's winnings" });
  });

  it('a start after the resolution grace has passed still resolves a window whose prices were final: the auto-void sweep waits for that', async () => {
    const { taker, window } = await positionOnNextWindow('BTC');
    const res = await postAdminReports(server, [{ asset: 'BTC', ts_ms: window.window_end_ms, price_e8: 101 }]);
    assert.equal(res.body.accepted, 1);
    await server.kill();
    // Down past the grace: at the start both the resolver and the auto-void sweep find the window due.
    server = await restartServer(server, { PARLAYD_RESOLUTION_GRACE_MS: '1' });
    const market = await waitForMarket(server, window.market_id, (m) => m['status'] !== 'OPEN', 2_000);
    assert.deepEqual([market['status'], market['outcome'], market['resolved_by']], ['RESOLVED', 'YES', 'oracle']);
    await waitFor(async () => assert.deepEqual(await balanceOf(server, taker), WON), { timeoutMs: 2_000, what: "the taker's winnings" });
  });
});
