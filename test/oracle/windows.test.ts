// Price windows resolve themselves from the oracle's prices (contract section 12): up, down, void on a tie
// or a stale price, within a second of the deciding report, through the same resolve as an admin's, so a
// filled RFQ position and a contest pick on the window settle.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { client } from '../helpers/http.js';
import { createContest, contestConfig, enter, getDetail, up } from '../helpers/contests.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { getMarket, postAdminReports, postSigned, signReports, waitForMarket, windowMarket } from '../helpers/oracle.js';
import { autoQuote, balanceOf, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet } from '../helpers/users.js';

const ORACLE = Wallet.createRandom();
const MINUTE_MS = 60_000;
/** A minute-aligned time an hour back: its windows are in the lookup's reach and every report is past. */
const BASE_MS = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('price windows resolved by the oracle', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({
      env: {
        PARLAYD_ORACLE_ADDRESSES: ORACLE.address,
        PARLAYD_PRICE_ASSETS: 'BTC,ETH,SOL,ADA,XRP',
        PARLAYD_PRICE_DURATIONS_SECS: '60,2',
        PARLAYD_ORACLE_MAX_STALENESS_MS: '60000',
        PARLAYD_QUOTE_WINDOW_MS: '100',
      },
    });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  /** Posts the start and end reports of the 60 s window at BASE_MS + offsetMs, and what the market became. */
  async function decide(asset: string, startPriceE8: number, endPriceE8: number) {
    const window = await windowMarket(server, asset, 60, BASE_MS);
    const [start, end] = await signReports(ORACLE, [
      { asset, ts_ms: window.window_start_ms, price_e8: startPriceE8 },
      { asset, ts_ms: window.window_end_ms, price_e8: endPriceE8 },
    ]);
    assert.equal((await postSigned(server, [start])).body.accepted, 1);
    // Only the start price is final: the window stays open.
    await sleep(50);
    assert.equal((await getMarket(server, window.market_id)).body.market.status, 'OPEN');
    const postedAtMs = Date.now();
    assert.equal((await postSigned(server, [end])).body.accepted, 1);
    const market = await waitForMarket(server, window.market_id, (m) => m['status'] !== 'OPEN', 1_000);
    return { window, market, latencyMs: Date.now() - postedAtMs };
  }

  it('resolves YES (up) when the end price is higher, within a second, showing both prices and resolved_by oracle', async () => {
    const { window, market, latencyMs } = await decide('BTC', 9_000_000_000_000, 9_000_000_000_001);
    assert.ok(latencyMs < 1_000, `resolved ${latencyMs} ms after the deciding report`);
    assert.deepEqual(market, {
      ...window,
      status: 'RESOLVED',
      outcome: 'YES',
      resolution_time_ms: market['resolution_time_ms'],
      resolved_by: 'oracle',
      start_price_e8: '9000000000000',
      end_price_e8: '9000000000001',
    });
  });

  it('resolves NO (down) when the end price is lower', async () => {
    const { market } = await decide('ETH', 300_000_000_000, 299_999_999_999);
    assert.equal(market['status'], 'RESOLVED');
    assert.equal(market['outcome'], 'NO');
    assert.equal(market['resolved_by'], 'oracle');
  });

  it('voids a window whose end price equals its start price', async () => {
    const { market } = await decide('SOL', 15_000_000_000, 15_000_000_000);
    assert.deepEqual(
      [market['status'], market['outcome'], market['resolved_by'], market['start_price_e8'], market['end_price_e8']],
      ['VOIDED', null, 'oracle', '15000000000', '15000000000'],
    );
  });

  it('voids a window whose start price is stale (the latest report before it is older than the bound)', async () => {
    // ADA: a report at BASE, then none until the end of the window three minutes later.
    const window = await windowMarket(server, 'ADA', 60, BASE_MS + 3 * MINUTE_MS);
    const reports = await signReports(ORACLE, [
      { asset: 'ADA', ts_ms: BASE_MS, price_e8: 40_000_000 },
      { asset: 'ADA', ts_ms: window.window_end_ms, price_e8: 41_000_000 },
    ]);
    assert.equal((await postSigned(server, reports)).body.accepted, 2);
    const market = await waitForMarket(server, window.market_id, (m) => m['status'] !== 'OPEN', 1_000);
    assert.deepEqual(
      [market['status'], market['resolved_by'], market['start_price_e8'], market['end_price_e8']],
      ['VOIDED', 'oracle', null, '41000000'],
    );
  });

  it('a window created after its prices are final resolves at once', async () => {
    // The window [BASE + 60 s, BASE + 120 s): BTC's report at its end comes first, then its market is created.
    const startMs = BASE_MS + MINUTE_MS;
    const [end] = await signReports(ORACLE, [{ asset: 'BTC', ts_ms: startMs + MINUTE_MS, price_e8: 8_000_000_000_000 }]);
    assert.equal((await postSigned(server, [end])).body.accepted, 1);
    const window = await windowMarket(server, 'BTC', 60, startMs);
    const market = await waitForMarket(server, window.market_id, (m) => m['status'] !== 'OPEN', 1_000);
    // Start price: BTC's report at BASE + 60 s (the first test's end report), 9000000000001.
    assert.deepEqual([market['outcome'], market['start_price_e8'], market['end_price_e8']], ['NO', '9000000000001', '8000000000000']);
  });

  it('GET /v1/markets/{id} is 404 MARKET_NOT_FOUND for an unknown id', async () => {
    const res = await client(server.baseUrl).get('/v1/markets/987654321');
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 404, body: { code: 'MARKET_NOT_FOUND', message: 'no such market' } },
    );
  });

  describe('settles what is at risk on the window, as an admin resolve does', () => {
    let maker: ConnectedMaker;
    before(async () => {
      maker = await connectNewMaker(server);
      autoQuote(maker, { odds: 2.5 });
    });
    after(async () => maker.close());

    it('a filled RFQ position and a contest entry on a 2 s window are paid when the oracle resolves it up', async () => {
      const taker = await loginWallet(server);
      await credit(server, taker.address, 50_000_000);
      // A 2 s window with at least 1.5 s left, so the RFQ fills and the entry lands before betting closes.
      if (Date.now() % 2_000 > 500) await sleep(2_000 - (Date.now() % 2_000) + 10);
      const window = await windowMarket(server, 'XRP', 2, Date.now());
      assert.equal(
        (await postAdminReports(server, [{ asset: 'XRP', ts_ms: window.window_start_ms, price_e8: 50_000_000 }])).body.accepted,
        1,
      );
      const contest = await createContest(server, contestConfig([window.market_id], { betting_closes_ms: window.window_end_ms }));
      const entered = await enter(server, taker, contest.contest_id, [up(window.market_id)]);
      assert.equal(entered.status, 201, JSON.stringify(entered.body));
      const rfq = await client(server.baseUrl, taker.token).post(
        '/v1/rfq/unsigned?wait_ms=3000',
        unsignedBody([{ market_id: window.market_id, direction: 'up' }], { wager_micros: 4_000_000 }),
      );
      assert.equal(rfq.body.status, 'completed', JSON.stringify(rfq.body));
      assert.equal(rfq.body.payout_micros, '10000000');
      assert.deepEqual(await balanceOf(server, taker), { available: 45_000_000n, reserved: 1_000_000n, atRisk: 4_000_000n });

      await sleep(Math.max(0, window.window_end_ms - Date.now()) + 5);
      const postedAtMs = Date.now();
      const res = await postAdminReports(server, [{ asset: 'XRP', ts_ms: window.window_end_ms, price_e8: 50_000_001 }]);
      assert.equal(res.body.accepted, 1);
      await waitForMarket(server, window.market_id, (m) => m['status'] === 'RESOLVED', 1_000);
      // Won: the payout (10) and the contest's whole pot (the one entry's 1) are available; nothing at risk.
      const deadline = postedAtMs + 1_000;
      for (;;) {
        const balance = await balanceOf(server, taker);
        if (balance.atRisk === 0n && balance.reserved === 0n) {
          assert.deepEqual(balance, { available: 56_000_000n, reserved: 0n, atRisk: 0n });
          break;
        }
        assert.ok(Date.now() < deadline, `not settled within a second: ${JSON.stringify(balance, (_k, v) => String(v))}`);
        await sleep(20);
      }
      assert.equal((await getDetail(server, contest.contest_id)).body.status, 'resolved');
    });
  });
});
