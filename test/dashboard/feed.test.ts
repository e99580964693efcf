// The dashboard's live feed (issue 23) against the real server: the admin token as the first message is the
// only way in, the figures are the registry's (they agree with /metrics), and the token is never logged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_DASHBOARD_SOCKETS } from '../../src/dashboard/feed.js';
import type { Frame } from '../../src/dashboard/frame.js';
import { admin, client } from '../helpers/http.js';
import { connectMaker, registerMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { autoQuote, unsignedBody } from '../helpers/rfq.js';
import { credit, loginWallet } from '../helpers/users.js';
import { metricSum, openFeed, openIdleFeed, startRfqFlow } from '../helpers/dashboard.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

describe('dashboard live feed', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('a wrong token is answered UNAUTHENTICATED and the socket closed 4401, with no frame', async () => {
    const feed = await openFeed(server, 'not-the-admin-token-at-all');
    assert.deepEqual(await feed.closed, { code: 4401, reason: 'UNAUTHENTICATED' });
    assert.deepEqual(feed.messages, [{ type: 'auth_result', ok: false, code: 'UNAUTHENTICATED' }]);
  });

  it("a user's token is answered FORBIDDEN (4403): the feed is the admin's", async () => {
    const user = await loginWallet(server);
    const feed = await openFeed(server, user.token);
    assert.deepEqual(await feed.closed, { code: 4403, reason: 'FORBIDDEN' });
    assert.deepEqual(feed.messages, [{ type: 'auth_result', ok: false, code: 'FORBIDDEN' }]);
  });

  it('with the admin token: history, then a frame a second whose totals follow the RFQs and agree with /metrics', async () => {
    const feed = await openFeed(server, server.adminToken);
    await feed.next((m) => m['type'] === 'history');
    assert.deepEqual(feed.messages.slice(0, 2), [
      { type: 'auth_result', ok: true },
      { type: 'history', frames: [] },
    ]);
    const flow = await startRfqFlow(server);
    await waitFor(() => flow.done >= 8, { timeoutMs: 60_000, intervalMs: 50, what: 'eight RFQs done' });
    await flow.stop();
    // A frame taken after the flow stopped: every RFQ of it has ended.
    const stoppedAtMs = Date.now();
    const { frame } = (await feed.next((m) => m['type'] === 'frame' && (m['frame'] as Frame).atMs > stoppedAtMs + 50)) as { frame: Frame };
    const metrics = (await client(server.baseUrl, server.adminToken).get('/metrics')).body as string;
    assert.equal(frame.rfqTotals.created, flow.done);
    assert.equal(frame.rfqTotals.created, metricSum(metrics, 'parlayd_rfq_created_total'));
    assert.equal(frame.rfqTotals.ended, metricSum(metrics, 'parlayd_rfq_terminal_total'));
    // Both makers quoted every RFQ; the last-look maker (better odds) filled each one it was asked about.
    assert.equal(frame.makers.length, 2);
    for (const maker of frame.makers) assert.equal(maker.quotes, flow.done, JSON.stringify(maker));
    assert.equal(
      frame.makers.reduce((sum, m) => sum + m.fills, 0),
      metricSum(metrics, 'parlayd_mm_fills_total'),
    );
    assert.ok(
      frame.makers.some((m) => m.fills > 0 && m.lastLookAccepted === m.fills),
      JSON.stringify(frame.makers),
    );
    assert.deepEqual(frame.shardQueueDepths, [0]);
    // The makers' locked collateral is read from the ledger (the flow's fills are open); the ledger check has
    // not run yet: its figures are absent, never 0.
    const check = (await client(server.baseUrl, server.adminToken).get('/v1/admin/ledger/check')).body;
    assert.equal(frame.money['lockedCollateralMicros'], check.locked_micros);
    assert.ok(Number(check.locked_micros) > 0, 'the fills locked collateral');
    assert.deepEqual([frame.money['ledgerCheckOk'], frame.money['ledgerCheckAtMs'], frame.money['openInterestMicros']], [null, null, null]);
    // Once it ran, the next frame shows its result and the open interest it summed.
    const checkedAtMs = Date.now();
    const { frame: after } = (await feed.next((m) => m['type'] === 'frame' && (m['frame'] as Frame).atMs > checkedAtMs + 50)) as {
      frame: Frame;
    };
    assert.equal(after.money['ledgerCheckOk'], true);
    assert.ok((after.money['ledgerCheckAtMs'] as number) >= checkedAtMs - 1_000);
    assert.equal(after.money['openInterestMicros'], (BigInt(check.at_risk_micros) + BigInt(check.locked_micros)).toString());
    // Some frame while the RFQs flowed saw them: a rate, a latency, quotes per RFQ.
    const frames = feed.messages.filter((m) => m['type'] === 'frame').map((m) => m['frame'] as Frame);
    assert.ok(
      frames.some((f) => f.rfqPerS['completed']! > 0 && f.latencyMs.p50 !== null && f.quotesPerRfq === 2),
      JSON.stringify(frames).slice(0, 2000),
    );
    feed.close();
  });

  it('never logs the admin token, nor the feed messages', () => {
    const everything = JSON.stringify(server.logs) + server.stderr.join('\n');
    assert.ok(!everything.includes(server.adminToken), 'the admin token is in the logs');
  });
});

describe('dashboard feed: sockets awaiting their token (issue 33 item 8)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('one address holds 4 places, one network 8; when all 32 are taken the longest waiting is evicted (4503) and the admin still gets in', async () => {
    // 127.0.1-4.x: four /24 networks, two addresses each, four sockets each = 32 places.
    const addresses = [1, 2, 3, 4].flatMap((net) => [`127.0.${net}.1`, `127.0.${net}.2`]);
    const idle = [];
    for (const address of addresses) for (let i = 0; i < 4; i++) idle.push(await openIdleFeed(server, address));
    await assert.rejects(openIdleFeed(server, '127.0.1.1'), /HTTP 429/, 'a fifth from one address');
    await assert.rejects(openIdleFeed(server, '127.0.1.3'), /HTTP 429/, 'a ninth from one network');
    const adminFeed = await openFeed(server, server.adminToken);
    assert.deepEqual(await idle[0]!.closed, { code: 4503, reason: 'AUTH_EVICTED' });
    await adminFeed.next((m) => m['type'] === 'history');
    assert.deepEqual(adminFeed.messages[0], { type: 'auth_result', ok: true });
    assert.ok(
      idle.slice(1).every((s) => s.isOpen()),
      'only the longest waiting was evicted',
    );
    // The admin's socket left the pending places when its token was taken: the next newcomer takes that
    // place, the one after it evicts the next longest waiting.
    const late = [await openIdleFeed(server, '127.0.5.1'), await openIdleFeed(server, '127.0.5.2')];
    assert.deepEqual(await idle[1]!.closed, { code: 4503, reason: 'AUTH_EVICTED' });
    assert.ok(
      [...idle.slice(2), ...late].every((s) => s.isOpen()),
      'no other socket was evicted',
    );
    for (const s of [...idle, ...late]) s.close();
    adminFeed.close();
  });

  it(
    'sockets that waited while the viewers filled up are refused when their token comes (4504), not let past the 32',
    { timeout: 20_000 },
    async () => {
      const waiting = [await openIdleFeed(server, '127.0.6.1'), await openIdleFeed(server, '127.0.6.2')];
      const viewers = [];
      for (let i = 0; i < MAX_DASHBOARD_SOCKETS - 1; i++) viewers.push(await openFeed(server, server.adminToken));
      for (const viewer of viewers) await viewer.next((m) => m['type'] === 'auth_result');
      for (const socket of waiting) socket.authenticate(server.adminToken); // one is the 32nd viewer, one too many
      const refused = await Promise.race(waiting.map((socket, i) => socket.closed.then((closed) => ({ i, closed }))));
      assert.deepEqual(refused.closed, { code: 4504, reason: 'VIEWERS_FULL' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(waiting[1 - refused.i]!.isOpen(), true, 'the 32nd watches');
      for (const s of [...waiting, ...viewers]) s.close();
    },
  );
});

describe('money figures past 2^53 micros', () => {
  // Two fills at odds 2 lock their wagers as liability: 2^53 + 1 micros in all (~9 billion USDC), a number a
  // double cannot hold (Number(2n ** 53n + 1n) is 2^53). Open interest is twice that, 2^54 + 2.
  const WAGERS = [2n ** 52n + 1n, 2n ** 52n];
  const LOCKED = 2n ** 53n + 1n;
  let server: TestServer;

  before(async () => {
    server = await startServer({ env: { PARLAYD_WAGER_MAX_MICROS: String(Number.MAX_SAFE_INTEGER) } });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('are exact in /metrics (whole USDC and the micros under one) and in the dashboard frame (decimal strings)', async () => {
    const maker = await connectMaker(server, await registerMaker(server, undefined, undefined, Number(WAGERS[0]!)));
    const topUp = await admin(server).post(`/v1/admin/market-makers/${maker.address}/credit`, {
      amount_micros: Number(WAGERS[1]!),
      idempotency_key: 'top-up',
    });
    assert.equal(topUp.status, 200, JSON.stringify(topUp.body));
    assert.equal(topUp.body.balance.available_micros, LOCKED.toString());
    const quotes = autoQuote(maker, { odds: 2, maxWagerMicros: String(Number.MAX_SAFE_INTEGER) });
    const market = (await createMarket(server)).market_id;
    for (const wager of WAGERS) {
      const taker = await loginWallet(server);
      await credit(server, taker.address, Number(wager));
      const res = await client(server.baseUrl, taker.token).post(
        '/v1/rfq/unsigned?wait_ms=5000',
        unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: Number(wager) }),
      );
      assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
    }
    quotes.stop();
    const check = await admin(server).get('/v1/admin/ledger/check');
    assert.deepEqual([check.body.ok, check.body.locked_micros, check.body.at_risk_micros], [true, LOCKED.toString(), LOCKED.toString()]);

    const metrics = (await admin(server).get('/metrics')).body as string;
    const lines = metrics.split('\n').filter((line) => /^parlayd_(maker_locked|open_interest)_/.test(line));
    assert.deepEqual(lines.sort(), [
      'parlayd_maker_locked_fraction_micros 740993',
      'parlayd_maker_locked_usdc 9007199254',
      'parlayd_open_interest_fraction_micros 481986',
      'parlayd_open_interest_usdc 18014398509',
    ]);

    const feed = await openFeed(server, server.adminToken);
    const askedAtMs = Date.now();
    const { frame } = (await feed.next((m) => m['type'] === 'frame' && (m['frame'] as Frame).atMs > askedAtMs)) as { frame: Frame };
    assert.deepEqual([frame.money.lockedCollateralMicros, frame.money.openInterestMicros], [LOCKED.toString(), (2n * LOCKED).toString()]);
    feed.close();
    await maker.close();
  });
});
