// A kill -9 while the shards are busy with each kind of message that moves money (issue 16): RFQ creates and
// fills, admin credits, contest entries, position settlement and contest settlement. After the restart every
// acknowledged write is there, nothing is paid twice, and the ledger agrees with itself (src/ledger/audit.ts:
// every balance equals its journal and its holds, and every hold is for a record that holds money; the test
// server's stop() runs that check on what the restarted server leaves). Two
// shards, so a contest's entries and a market's positions belong to both.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { readHold } from '../../src/ledger/ledger.js';
import { openStore } from '../../src/store/db.js';
import { contestConfig, createContest, enter, getDetail, up } from '../helpers/contests.js';
import { admin, client, type HttpResult } from '../helpers/http.js';
import { connectNewMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { autoQuote, balanceOf, unsignedBody } from '../helpers/rfq.js';
import { restartServer, startServer, type TestServer } from '../helpers/server.js';
import { fundedUser, type TestUser } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const WAGER = 1_000_000;
// The one maker answers every RFQ, which closes it at once: the long window only keeps a slow machine from timing out.
const ENV = { PARLAYD_SHARDS: '2', PARLAYD_QUOTE_WINDOW_MS: '2000' };

/** Starts every request, kills the server `afterMs` later, and returns the answers that came before it died. */
async function killDuring(server: TestServer, requests: Array<() => Promise<HttpResult>>, afterMs: number): Promise<HttpResult[]> {
  const answered: HttpResult[] = [];
  const all = requests.map((request) =>
    request().then(
      (r) => void answered.push(r),
      () => undefined,
    ),
  );
  await sleep(afterMs);
  await server.kill();
  await Promise.all(all);
  return answered;
}

/**
 * Stops the restarted server once its ledger check is clean (the stop then checks the data it leaves). A
 * maker's lock granted for a fill the kill interrupted stays pending until the maker's shard asks the fill's
 * shard about it, 2 s after it was granted (engine/owner.ts lockQueryMs), and is voided then: a restart and a
 * few reads can take less than that on a fast machine or with few answers before the kill.
 */
async function stopSettled(server: TestServer): Promise<number | null> {
  await waitFor(async () => (await admin(server).get('/v1/admin/ledger/check')).body.ok === true, {
    what: 'the ledger check clean after the restart (pending locks asked about and voided)',
    timeoutMs: 15_000,
    intervalMs: 200,
  });
  return server.stop();
}

async function users(server: TestServer, count: number, fundsMicros: number): Promise<TestUser[]> {
  return Promise.all(Array.from({ length: count }, () => fundedUser(server, fundsMicros)));
}

describe('a kill -9 during each kind of shard message', () => {
  it('RFQ creates and fills: every acknowledged RFQ is found, and the ledger agrees', async () => {
    const server = await startServer({ env: ENV });
    const takers = await users(server, 10, 10 * WAGER);
    const market = (await createMarket(server)).market_id;
    const maker = await connectNewMaker(server);
    autoQuote(maker, { odds: 2 });
    const requests = takers.flatMap((taker) =>
      Array.from(
        { length: 10 },
        () => () =>
          client(server.baseUrl, taker.token).post(
            '/v1/rfq/unsigned?wait_ms=3000',
            unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER }),
          ),
      ),
    );
    const answered = await killDuring(server, requests, 150);
    const restarted = await restartServer(server);
    const acked = answered.filter((a) => a.status === 201).map((a) => a.body.request_id as string);
    let found = 0;
    for (const taker of takers) {
      for (const id of acked) if ((await client(restarted.baseUrl, taker.token).get(`/v1/rfq/${id}`)).status === 200) found++;
    }
    assert.equal(found, acked.length, 'every acknowledged RFQ is found by its owner');
    await maker.close();
    assert.equal(await stopSettled(restarted), 0);
  });

  it('admin credits: after the restart, replaying every key credits each exactly once', async () => {
    const server = await startServer({ env: ENV });
    const people = await users(server, 10, 1);
    const keys = people.flatMap((user) => Array.from({ length: 10 }, () => ({ user, key: randomUUID() })));
    const post = (target: TestServer, { user, key }: (typeof keys)[number]) =>
      client(target.baseUrl, target.adminToken).post('/v1/admin/users/credit', {
        wallet: user.address,
        amount_micros: WAGER,
        idempotency_key: key,
      });
    const answered = await killDuring(
      server,
      keys.map((k) => () => post(server, k)),
      40,
    );
    assert.ok(answered.every((a) => a.status === 200));
    const restarted = await restartServer(server);
    for (const k of keys) assert.equal((await post(restarted, k)).status, 200);
    for (const user of people) assert.equal((await balanceOf(restarted, user)).available, BigInt(1 + 10 * WAGER));
    assert.equal(await stopSettled(restarted), 0);
  });

  it('contest entries: every acknowledged entry counts, each reservation has its entry, and the ledger agrees', async () => {
    const server = await startServer({ env: ENV });
    const people = await users(server, 10, 20 * WAGER);
    const market = await createMarket(server, 'entries');
    const contest = await createContest(server, contestConfig([market.market_id], { bet_amount_micros: WAGER, entry_cap: 1000 }));
    const requests = people.flatMap((user) =>
      Array.from({ length: 15 }, () => () => enter(server, user, contest.contest_id, [up(market.market_id)])),
    );
    const answered = await killDuring(server, requests, 60);
    const restarted = await restartServer(server);
    const filled = (await getDetail(restarted, contest.contest_id)).body.entries_filled as number;
    assert.ok(filled >= answered.filter((a) => a.status === 201).length, `${filled} entries after the restart`);
    let reserved = 0n;
    for (const user of people) reserved += (await balanceOf(restarted, user)).reserved;
    assert.equal(reserved, BigInt(filled * WAGER), 'one stake reserved per entry, none without one');
    assert.equal(await stopSettled(restarted), 0);
  });

  it('position settlement: the next start settles what the crash cut short, each position once', async () => {
    const server = await startServer({ env: ENV });
    const takers = await users(server, 10, 10 * WAGER);
    const market = (await createMarket(server)).market_id;
    const maker = await connectNewMaker(server);
    autoQuote(maker, { odds: 2 });
    const fills = await Promise.all(
      takers.flatMap((taker) =>
        Array.from({ length: 6 }, () =>
          client(server.baseUrl, taker.token).post(
            '/v1/rfq/unsigned?wait_ms=3000',
            unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER }),
          ),
        ),
      ),
    );
    assert.ok(
      fills.every((f) => f.body.status === 'completed'),
      'every RFQ filled',
    );
    await maker.close();
    await killDuring(server, [() => admin(server).post(`/v1/admin/markets/${market}/resolve`, { outcome: 'YES' })], 15);
    const restarted = await restartServer(server);
    // Whether or not the resolution was durable before the kill, once it is, every position pays 2x once.
    await admin(restarted).post(`/v1/admin/markets/${market}/resolve`, { outcome: 'YES' });
    // With two shards the maker's liability reaches a taker of the other shard on its channel, a hop after
    // the stake came back (docs/engine.md, "Gaps left"): under load a read between the two saw 10 of the 16.
    await waitFor(
      async () => {
        for (const taker of takers)
          assert.deepEqual(await balanceOf(restarted, taker), { available: BigInt(16 * WAGER), reserved: 0n, atRisk: 0n });
      },
      { timeoutMs: 5_000, what: "every position paid 2x, its liability arrived from the maker's shard" },
    );
    assert.equal(await stopSettled(restarted), 0);
    const store = openStore(restarted.dataDir);
    try {
      for (const fill of fills) assert.equal(readHold(store, `rfq:${fill.body.request_id}`), undefined);
    } finally {
      await store.close();
    }
  });

  it('fills and settlements in one burst, both sides: the ledger check agrees after the restart, and after the rest settles', async () => {
    const server = await startServer({ env: ENV });
    const takers = await users(server, 10, 10 * WAGER);
    const [settling, filling] = [(await createMarket(server)).market_id, (await createMarket(server)).market_id];
    const maker = await connectNewMaker(server);
    autoQuote(maker, { odds: 2 });
    const rfqOn = (taker: TestUser, market: number) => () =>
      client(server.baseUrl, taker.token).post(
        '/v1/rfq/unsigned?wait_ms=3000',
        unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER }),
      );
    // Positions on one market first; then, at once, its resolution (settlement on both shards, the maker's
    // locked liability and the takers' stakes moving) and new fills on the other market, and a kill -9.
    const filled = await Promise.all(takers.flatMap((taker) => [rfqOn(taker, settling)(), rfqOn(taker, settling)()]));
    assert.ok(
      filled.every((f) => f.body.status === 'completed'),
      'every RFQ filled',
    );
    const burst = [
      () => admin(server).post(`/v1/admin/markets/${settling}/resolve`, { outcome: 'NO' }),
      ...takers.flatMap((t) => [rfqOn(t, filling), rfqOn(t, filling)]),
    ];
    await killDuring(server, burst, 40);
    const restarted = await restartServer(server);
    const checkOk = async () => {
      const check = await admin(restarted).get('/v1/admin/ledger/check');
      assert.equal(check.body.ok, true, JSON.stringify(check.body));
    };
    await checkOk();
    // Everything settles once it is resolved: nothing is left at risk or locked, and the ledger still agrees.
    await admin(restarted).post(`/v1/admin/markets/${settling}/resolve`, { outcome: 'NO' });
    await admin(restarted).post(`/v1/admin/markets/${filling}/resolve`, { outcome: 'NO' });
    await waitFor(
      async () => {
        for (const taker of takers) assert.deepEqual((await balanceOf(restarted, taker)).atRisk, 0n);
      },
      { timeoutMs: 5_000, what: "every taker's fill settled" },
    );
    const mm = await client(restarted.baseUrl, restarted.adminToken).get('/v1/admin/ledger/check');
    assert.equal(mm.body.locked_micros, '0', 'no maker collateral stays locked');
    await checkOk();
    await maker.close();
    assert.equal(await stopSettled(restarted), 0);
  });

  it('contest settlement: the next start finishes it, every entry paid once, and the ledger agrees', async () => {
    const server = await startServer({ env: ENV });
    const people = await users(server, 10, 40 * WAGER);
    const market = await createMarket(server, 'settle');
    const contest = await createContest(
      server,
      contestConfig([market.market_id], { bet_amount_micros: WAGER, entry_cap: 1000, game_type: 'outcast', winning_split_bps: [] }),
    );
    // 300 entries: two settlement batches (256 each), so a kill can fall between them.
    await Promise.all(
      people.map(async (user) => {
        for (let i = 0; i < 30; i++) assert.equal((await enter(server, user, contest.contest_id, [up(market.market_id)])).status, 201);
      }),
    );
    await killDuring(server, [() => admin(server).post(`/v1/admin/markets/${market.market_id}/resolve`, { outcome: 'YES' })], 25);
    const restarted = await restartServer(server);
    await admin(restarted).post(`/v1/admin/markets/${market.market_id}/resolve`, { outcome: 'YES' });
    await waitFor(async () => assert.equal((await getDetail(restarted, contest.contest_id)).body.status, 'resolved'), {
      timeoutMs: 10_000,
      what: 'the contest resolved',
    });
    // Every entry wins an outcast contest with no prize pool: each gets its stake back.
    for (const user of people)
      assert.deepEqual(await balanceOf(restarted, user), { available: BigInt(40 * WAGER), reserved: 0n, atRisk: 0n });
    assert.equal(await stopSettled(restarted), 0);
  });
});
