// GET /v1/admin/ledger/check (contract section 11) sees more than the transfers: every hold against its
// bucket and against the record it stands for, every record that holds money against its hold, an open
// contest's pot against its pool, an RFQ that never ends (src/ledger/holds-audit.ts). Each broken state is
// written straight into the LMDB (helpers/store-writes.ts): what only a bug or a crash leaves, since every
// request keeps them consistent. A service so broken is killed and its data discarded, not stopped (a stop
// runs the same check on what it leaves, which would fail on purpose here).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { poolRef, PROTOCOL, userAccount } from '../../src/records/ledger.js';
import { rfqRef } from '../../src/records/rfqs.js';
import type { LedgerDifference } from '../../src/contract/money.js';
import { openStore, type Store } from '../../src/store/db.js';
import { contestConfig, createContest, enter, up } from '../helpers/contests.js';
import { admin, client } from '../helpers/http.js';
import { connectNewMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { autoQuote, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { oneShardLedger, refundBehindContest, writeStrandedRfq } from '../helpers/store-writes.js';
import { fundedUser, type TestUser } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const USDC = 1_000_000;
const USDC_BIG = BigInt(USDC);
const broken: TestServer[] = [];
after(async () => {
  for (const server of broken) {
    await server.kill();
    removeDataDir(server);
  }
});

async function ledgerCheck(server: TestServer): Promise<{ ok: boolean; differences: LedgerDifference[] }> {
  const res = await admin(server).get('/v1/admin/ledger/check');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { ok: res.body.ok, differences: res.body.differences };
}

/** The service's LMDB, opened by this process too, while `server` runs or after it stopped. */
async function withStore<T>(server: TestServer, write: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(server.dataDir);
  try {
    return await write(store);
  } finally {
    await store.close();
  }
}

/** Stops `server` (its data checked clean), writes the broken state, and starts it again on that data. */
async function breakWhileStopped(server: TestServer, write: (store: Store) => Promise<void>): Promise<TestServer> {
  assert.equal(await server.stop(), 0);
  await withStore(server, write);
  const restarted = await restartServer(server);
  broken.push(restarted);
  return restarted;
}

/** Sorted by reference, so a whole list can be compared whatever order the check found them in. */
const byRef = (differences: LedgerDifference[]) => [...differences].sort((a, b) => (a.ref ?? '').localeCompare(b.ref ?? ''));

describe('the admin ledger check, on holds and the records they stand for', () => {
  it('a live service with money held for every kind of record, one RFQ active at the time of the check, is ok', async () => {
    const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '3000' } });
    try {
      const taker = await fundedUser(server, 100 * USDC);
      const market = (await createMarket(server)).market_id;
      const quoting = await connectNewMaker(server);
      const quotes = autoQuote(quoting, { odds: 2.5 });
      // A filled position (the taker's stake at risk, the maker's liability locked), while the maker is alone.
      const filled = await client(server.baseUrl, taker.token).post(
        '/v1/rfq/unsigned?wait_ms=5000',
        unsignedBody([up(market)], { wager_micros: 2 * USDC }),
      );
      assert.equal(filled.body.status, 'completed', JSON.stringify(filled.body));
      // A contest with a prize pool and an entry, and a pending withdrawal.
      const contest = await createContest(server, contestConfig([market], { protocol_prize_pool_micros: 5 * USDC }));
      assert.equal((await enter(server, taker, contest.contest_id, [up(market)])).status, 201);
      const withdrawal = await client(server.baseUrl, taker.token).post('/v1/user/withdrawals', {
        amount_micros: 3 * USDC,
        destination: '0x000000000000000000000000000000000000dead',
        idempotency_key: randomUUID(),
      });
      assert.equal(withdrawal.status, 201, JSON.stringify(withdrawal.body));
      // A maker that never answers keeps the next RFQ quoting for its whole window: active at the check.
      const silent = await connectNewMaker(server);
      const active = await client(server.baseUrl, taker.token).post('/v1/rfq/unsigned', unsignedBody([up(market)], { wager_micros: USDC }));
      assert.equal(active.status, 201, JSON.stringify(active.body));
      const check = await ledgerCheck(server);
      const afterCheck = await client(server.baseUrl, taker.token).get(`/v1/rfq/${active.body.request_id}`);
      assert.deepEqual(check, { ok: true, differences: [] });
      assert.equal(afterCheck.body.status, 'pending', 'the RFQ was still active at the check (and after it)');
      quotes.stop();
      await Promise.all([quoting.close(), silent.close()]);
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });

  it('a hold for no record and a hold for an RFQ that ended: each reported against its owner, ok false', async () => {
    let server = await startServer();
    const user = await fundedUser(server, 10 * USDC);
    const stray = rfqRef(randomUUID());
    let ended = '';
    server = await breakWhileStopped(server, async (store) => {
      await store.transact(() => oneShardLedger(store).reserve(user.userId, 2n * BigInt(USDC), stray, Date.now()));
      ended = await writeStrandedRfq(store, user, {
        wagerMicros: 3n * BigInt(USDC),
        reservedMicros: 3n * BigInt(USDC),
        expiresAtMs: Date.now(),
        isEnded: true,
      });
    });
    const check = await ledgerCheck(server);
    assert.equal(check.ok, false);
    const account = userAccount(user.userId);
    assert.deepEqual(
      byRef(check.differences),
      byRef([
        { account, bucket: 'reserved', expected_micros: '0', actual_micros: String(2 * USDC), reason: 'hold_without_record', ref: stray },
        {
          account,
          bucket: 'reserved',
          expected_micros: '0',
          actual_micros: String(3 * USDC),
          reason: 'hold_without_record',
          ref: rfqRef(ended),
        },
      ]),
    );
  });

  it("a contest's pot that differs from its pool, and a contest refunded but still open: each reported on its pool", async () => {
    let server = await startServer();
    const markets = [(await createMarket(server)).market_id, (await createMarket(server)).market_id];
    const players: TestUser[] = [await fundedUser(server, 10 * USDC), await fundedUser(server, 10 * USDC)];
    const shortPot = await createContest(server, contestConfig([markets[0]!], { protocol_prize_pool_micros: 4 * USDC }));
    const refunded = await createContest(server, contestConfig([markets[1]!], { protocol_prize_pool_micros: 6 * USDC }));
    for (const player of players) {
      assert.equal((await enter(server, player, shortPot.contest_id, [up(markets[0]!)])).status, 201);
      assert.equal((await enter(server, player, refunded.contest_id, [up(markets[1]!)])).status, 201);
    }
    server = await breakWhileStopped(server, async (store) => {
      // One stake back to its user without the contest settling: the pot (pool + both stakes, once collected)
      // is one stake short of what it must pay from.
      await refundBehindContest(store, shortPot.contest_id, { entries: 1, settled: false, closePool: false });
    });
    // Every stake refunded with its entry's void record and the pool returned, the contest left open: written
    // while the service runs, since a start finishes such a contest as the void it was (contests/settlement.ts).
    await withStore(server, async (store) => {
      await refundBehindContest(store, refunded.contest_id, { entries: 2, settled: true, closePool: true });
    });
    const check = await ledgerCheck(server);
    assert.equal(check.ok, false);
    assert.deepEqual(
      byRef(check.differences),
      byRef([
        // The released entry counts as collected (its hold gone, unsettled): the pool should hold 4 + 1.
        {
          account: PROTOCOL,
          bucket: 'committed',
          expected_micros: String(5 * USDC),
          actual_micros: String(4 * USDC),
          reason: 'pot',
          ref: poolRef(shortPot.contest_id),
        },
        // Refunded (settled as a void): the pool should still hold its prize until the contest closes it.
        {
          account: PROTOCOL,
          bucket: 'committed',
          expected_micros: String(6 * USDC),
          actual_micros: '0',
          reason: 'pot',
          ref: poolRef(refunded.contest_id),
        },
      ]),
    );
  });

  it('an RFQ pending with no hold, and RFQs pending long past their expiry with their wagers reserved (marked active or not): ok false', async () => {
    const server = await startServer();
    broken.push(server);
    const user = await fundedUser(server, 10 * USDC);
    // Written while the service runs (a restart would end them): records no shard holds, as a lost RFQ leaves.
    // A pending RFQ with its hold and not yet at its expiry is what every quoting RFQ is: consistent.
    const [unheld, overdue, unmarked] = await withStore(server, async (store) => [
      await writeStrandedRfq(store, user, { wagerMicros: 2n * BigInt(USDC), reservedMicros: null, expiresAtMs: Date.now() + 60_000 }),
      await writeStrandedRfq(store, user, {
        wagerMicros: 3n * BigInt(USDC),
        reservedMicros: 3n * BigInt(USDC),
        expiresAtMs: Date.now() - 120_000,
      }),
      await writeStrandedRfq(store, user, {
        wagerMicros: USDC_BIG,
        reservedMicros: USDC_BIG,
        expiresAtMs: Date.now() - 120_000,
        isUnmarked: true,
      }),
      await writeStrandedRfq(store, user, { wagerMicros: USDC_BIG, reservedMicros: USDC_BIG, expiresAtMs: Date.now() + 60_000 }),
    ]);
    const check = await ledgerCheck(server);
    assert.equal(check.ok, false);
    const account = userAccount(user.userId);
    assert.deepEqual(
      byRef(check.differences),
      byRef([
        {
          account,
          bucket: 'reserved',
          expected_micros: String(2 * USDC),
          actual_micros: '0',
          reason: 'record_without_hold',
          ref: rfqRef(unheld),
        },
        { account, bucket: 'reserved', expected_micros: '0', actual_micros: String(3 * USDC), reason: 'overdue', ref: rfqRef(overdue) },
        { account, bucket: 'reserved', expected_micros: '0', actual_micros: String(USDC), reason: 'overdue', ref: rfqRef(unmarked) },
      ]),
    );
    // The last check's result is what /metrics shows.
    const metrics = await waitFor(
      async () => {
        const res = await admin(server).get('/metrics');
        return /^parlayd_ledger_check_ok 0$/m.test(String(res.body)) ? res : false;
      },
      { what: 'parlayd_ledger_check_ok 0' },
    );
    assert.equal(metrics.status, 200);
  });
});
