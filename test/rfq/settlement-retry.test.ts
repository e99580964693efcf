// A market resolution whose listeners failed at run time (contract sections 4 and 5; src/markets/resolution.ts
// `resolve`): the resolution is durable, the resolve fails (500 INTERNAL over HTTP), and the operator's
// natural reaction, the same resolve again, re-runs the listeners, so a filled position is settled then and
// not only at the next start.
//
// How a listener is made to fail. No run-time failure of the real settlement is reachable from outside the
// process: its only writes are small LMDB transactions (a full disk or an I/O error cannot be arranged
// without privileges, and LMDB refuses every later write after a failed commit anyway), and its only other
// throws are ledger assertions on corrupted data, which are bugs. So the filled positions are made for real
// (the real server, a real maker over `ws`, real fills in LMDB), then the server stops and the resolution
// runs in this process on that LMDB, through the real Markets and the real Settlement, with a listener
// registered by the test that throws once. The last test checks the admin route's answer on a real service
// started in this process (so that the test can register such a listener on it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createService } from '../../src/boot/app.js';
import { overloaded } from '../../src/lib/errors.js';
import { systemClock } from '../../src/lib/clock.js';
import { loadConfig } from '../../src/config/config.js';
import { readJournal, readUserBalance } from '../../src/ledger/ledger.js';
import { userAccount } from '../../src/records/ledger.js';
import type { ShardPool } from '../../src/rfq/shard-pool.js';
import { Markets } from '../../src/markets/markets.js';
import { marketKey } from '../../src/records/markets.js';
import type { Market } from '../../src/contract/markets.js';
import { fillKey, type FillRecord } from '../../src/records/fills.js';
import { Settlement } from '../../src/rfq/settlement.js';
import { openStore, type Store } from '../../src/store/db.js';
import { client } from '../helpers/http.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { autoQuote, balanceOf, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, startServer, testServiceEnv, type TestServer } from '../helpers/server.js';
import { startInProcessShards } from '../helpers/shards.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';

const FUNDS_MICROS = 50_000_000n;
const WAGER_MICROS = 4_000_000n;
/** The maker quotes 2.5: a won single-leg position pays 10 USDC. */
const PAYOUT_MICROS = 10_000_000n;
/** The resolution listeners do not look up price markets. */
const NO_PRICE_MARKETS = { priceAssets: [], priceDurationsSecs: [] };

interface FilledPosition {
  user: TestUser;
  marketId: number;
  requestId: string;
}

describe('a resolution whose listeners failed, retried with the same outcome', () => {
  let server: TestServer;
  let maker: ConnectedMaker;
  let store: Store;
  /** The balances' owners, in this process, over the stopped server's LMDB. */
  let shards: ShardPool;
  /** Settled by the retry after its settlement failed. */
  let retried: FilledPosition;
  /** Settled although another listener before the settlement failed. */
  let beside: FilledPosition;
  /** Settled by the background re-run after its settlement was refused for want of room (503). */
  let refused: FilledPosition;

  /** A taker with FUNDS_MICROS and one filled position, `up` on a fresh market, at risk. */
  async function filledPosition(): Promise<FilledPosition> {
    const user = await loginWallet(server);
    await credit(server, user.address, Number(FUNDS_MICROS));
    const marketId = (await createMarket(server)).market_id;
    const body = unsignedBody([{ market_id: marketId, direction: 'up' }], { wager_micros: Number(WAGER_MICROS) });
    const result = await client(server.baseUrl, user.token).post('/v1/rfq/unsigned?wait_ms=5000', body);
    assert.equal(result.body.status, 'completed', JSON.stringify(result.body));
    assert.equal(result.body.payout_micros, String(PAYOUT_MICROS));
    assert.deepEqual(await balanceOf(server, user), { available: FUNDS_MICROS - WAGER_MICROS, reserved: 0n, atRisk: WAGER_MICROS });
    return { user, marketId, requestId: result.body.request_id as string };
  }

  before(async () => {
    server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '300' } });
    maker = await connectNewMaker(server);
    autoQuote(maker, { odds: 2.5 });
    retried = await filledPosition();
    beside = await filledPosition();
    refused = await filledPosition();
    await maker.close();
    assert.equal(await server.stop(), 0);
    store = openStore(server.dataDir);
    shards = await startInProcessShards(server.dataDir, () => store.root.resetReadTxn());
  });

  after(async () => {
    await shards?.close();
    await store?.close();
    if (server !== undefined) removeDataDir(server);
  });

  const balanceOfUser = (user: TestUser) => readUserBalance(store, user.userId);
  const journalLength = (user: TestUser) => readJournal(store, userAccount(user.userId)).length;
  const fillOf = (position: FilledPosition) => store.db<FillRecord>('fills').get(fillKey(maker.address, position.requestId));
  const openPositionsOf = (marketId: number) => [
    ...store.db<true>('openPositions').getKeys({ start: `${marketKey(marketId)}:`, end: `${marketKey(marketId)}:~` }),
  ];

  const errorMessages = (failure: Error) => (failure as AggregateError).errors.map((err: Error) => err.message);

  async function failureOf(resolving: Promise<Market>): Promise<Error> {
    const err = await resolving.then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error, 'the resolve fails');
    return err;
  }

  test('a resolve whose RFQ settlement failed fails with the resolution durable; the same-outcome retry settles the position', async () => {
    const markets = new Markets(store, systemClock, NO_PRICE_MARKETS);
    const settlement = new Settlement(store, shards, systemClock);
    // The settlement listener as engine.ts registers it, failing at its first run the way a rejected
    // transaction fails it: each position settles in one transaction, all or nothing, so nothing is written.
    let runs = 0;
    markets.onResolved(async (market) => {
      runs += 1;
      if (runs === 1) throw new Error('settlement transaction rejected: no space left on device');
      await settlement.onMarketResolved(market);
    });

    const failure = await failureOf(markets.resolve(retried.marketId, 'YES'));
    const durable = store.db<Market>('markets').get(marketKey(retried.marketId));
    assert.equal(durable?.status, 'RESOLVED');
    assert.equal(durable?.outcome, 'YES');
    assert.equal(balanceOfUser(retried.user).atRiskMicros, WAGER_MICROS, 'the failed settlement left the stake at risk');
    assert.equal(fillOf(retried)?.settledPaidMicros, null);

    // The operator retries the same resolve: the market is answered unchanged and the settlement runs.
    assert.deepEqual(await markets.resolve(retried.marketId, 'YES'), durable);
    const settled = {
      availableMicros: FUNDS_MICROS - WAGER_MICROS + PAYOUT_MICROS,
      reservedMicros: 0n,
      atRiskMicros: 0n,
      pendingWithdrawalMicros: 0n,
    };
    assert.deepEqual(balanceOfUser(retried.user), settled);
    assert.equal(runs, 2, 'the retry re-ran the listener');
    assert.equal(fillOf(retried)?.settledPaidMicros, String(PAYOUT_MICROS));
    assert.deepEqual(openPositionsOf(retried.marketId), []);

    // Another retry runs the settlement again and changes nothing: it is paid once.
    const journalBefore = journalLength(retried.user);
    assert.deepEqual(await markets.resolve(retried.marketId, 'YES'), durable);
    assert.equal(runs, 3);
    assert.deepEqual(balanceOfUser(retried.user), settled);
    assert.equal(journalLength(retried.user), journalBefore);

    // What the first resolve failed with says what is durable and what to do, and carries the listener's error.
    assert.equal(
      failure.message,
      `market ${retried.marketId} is resolved (durable), but 1 of its resolution listeners failed; ` +
        'resolving it again with the same outcome re-runs them',
    );
    assert.deepEqual(errorMessages(failure), ['settlement transaction rejected: no space left on device']);
  });

  test('a listener that fails does not keep the RFQ settlement from running, and a retry runs both again without paying twice', async () => {
    const markets = new Markets(store, systemClock, NO_PRICE_MARKETS);
    // Registered before the settlement, as the contest listener is in the service (app.ts, then engine.ts).
    let failingRuns = 0;
    markets.onResolved(() => {
      failingRuns += 1;
      if (failingRuns === 1) throw new Error('another listener failed');
    });
    const settlement = new Settlement(store, shards, systemClock);
    markets.onResolved(async (market) => {
      await settlement.onMarketResolved(market);
    });

    const failure = await failureOf(markets.resolve(beside.marketId, 'NO'));
    // `up` lost on NO: the stake is gone and nothing is at risk any more, although the resolve failed.
    const lost = {
      availableMicros: FUNDS_MICROS - WAGER_MICROS,
      reservedMicros: 0n,
      atRiskMicros: 0n,
      pendingWithdrawalMicros: 0n,
    };
    assert.deepEqual(balanceOfUser(beside.user), lost);
    assert.equal(fillOf(beside)?.settledPaidMicros, '0');
    const journalBefore = journalLength(beside.user);

    const answered = await markets.resolve(beside.marketId, 'NO');
    assert.deepEqual(answered, store.db<Market>('markets').get(marketKey(beside.marketId)));
    assert.equal(answered.status, 'RESOLVED');
    assert.equal(failingRuns, 2, 'the retry re-ran the listener that failed');
    assert.deepEqual(balanceOfUser(beside.user), lost);
    assert.equal(journalLength(beside.user), journalBefore, 'the settlement re-ran and paid nothing twice');
    assert.deepEqual(errorMessages(failure), ['another listener failed']);
  });

  test('a settlement refused 503 for want of room (issue 21) is re-run by itself, without another resolve', async () => {
    const markets = new Markets(store, systemClock, NO_PRICE_MARKETS);
    const settlement = new Settlement(store, shards, systemClock);
    // The real settlement, refused at its first run the way a full store refuses it: the shard's transaction
    // fails for want of space, nothing of it is written, and the pool answers 503 OVERLOADED.
    let runs = 0;
    markets.onResolved(async (market) => {
      runs += 1;
      if (runs === 1) throw overloaded(5);
      await settlement.onMarketResolved(market);
    });
    try {
      const failure = await failureOf(markets.resolve(refused.marketId, 'YES'));
      assert.deepEqual(errorMessages(failure), ['service is overloaded, nothing was accepted']);
      assert.equal(balanceOfUser(refused.user).atRiskMicros, WAGER_MICROS, 'nothing settled yet');

      // No resolve call: the background re-run (1 s after the failure) settles the position once.
      const deadlineMs = Date.now() + 10_000;
      while (fillOf(refused)?.settledPaidMicros == null && Date.now() < deadlineMs) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        store.root.resetReadTxn();
      }
      assert.equal(fillOf(refused)?.settledPaidMicros, String(PAYOUT_MICROS));
      assert.equal(runs, 2, 'one background re-run');
      assert.deepEqual(balanceOfUser(refused.user), {
        availableMicros: FUNDS_MICROS - WAGER_MICROS + PAYOUT_MICROS,
        reservedMicros: 0n,
        atRiskMicros: 0n,
        pendingWithdrawalMicros: 0n,
      });
      assert.deepEqual(openPositionsOf(refused.marketId), []);
    } finally {
      markets.stopRetries();
    }
  });
});

test('the admin resolve answers 500 INTERNAL (logged with the request id) when a listener fails, and its same-outcome retry 200 once the listeners ran', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-test-'));
  const config = loadConfig(testServiceEnv(dataDir));
  const logs: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const service = await createService(config, log);
  try {
    let runs = 0;
    service.services.markets.onResolved(() => {
      runs += 1;
      if (runs === 1) throw new Error('listener failed once');
    });
    const admin = client(`http://127.0.0.1:${service.port}`, config.adminToken);
    const created = await admin.post('/v1/admin/mention-markets', {
      name: 'Will the speaker say "retry"?',
      source_kind: 'test',
      source_event_id: 'EVT-retry',
      source_market_id: 'MKT-retry',
      betting_closes_at_ms: Date.now() + 3_600_000,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const marketId = created.body.market_id as number;
    const resolve = (outcome: string) => admin.post(`/v1/admin/markets/${marketId}/resolve`, { outcome });

    const failed = await resolve('YES');
    assert.equal(failed.status, 500);
    const requestId = /^internal error \(request (.+)\)$/.exec(failed.body.message as string)?.[1];
    assert.ok(requestId !== undefined, failed.body.message);
    assert.deepEqual(failed.body, { code: 'INTERNAL', message: `internal error (request ${requestId})` });

    // Durable although the answer was 500: the market is listed as resolved.
    const listed = await client(`http://127.0.0.1:${service.port}`).get('/v1/mention-markets?status=RESOLVED');
    const resolvedMarket = (listed.body.markets as Market[]).find((m) => m.market_id === marketId);
    assert.equal(resolvedMarket?.outcome, 'YES');

    const retried = await resolve('YES');
    assert.deepEqual({ status: retried.status, body: retried.body }, { status: 200, body: resolvedMarket });
    assert.equal(runs, 2, 'the retry re-ran the listeners');
    const other = await resolve('NO');
    assert.deepEqual(
      { status: other.status, body: other.body },
      { status: 409, body: { code: 'MARKET_ALREADY_RESOLVED', message: 'market already resolved with another outcome' } },
    );
    assert.equal(runs, 2, 'a conflicting outcome runs nothing');

    // The operator's side of the 500: the log line of that request says the resolution is durable and what to do.
    const logged = logs.find((entry) => entry['requestId'] === requestId);
    assert.equal(logged?.['msg'], 'unhandled error in request');
    const err = logged?.['err'] as { message: string; aggregateErrors: { message: string }[] };
    assert.equal(
      err.message,
      `market ${marketId} is resolved (durable), but 1 of its resolution listeners failed; resolving it again with the same outcome re-runs them`,
    );
    assert.deepEqual(
      err.aggregateErrors.map((e) => e.message),
      ['listener failed once'],
    );
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
