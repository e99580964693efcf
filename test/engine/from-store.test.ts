// A data directory of today's layout becomes the owners' first snapshots (src/engine/from-store.ts): a real
// service leaves an open position (a stake at risk and a maker's lock), a pending withdrawal, a contest with
// an entry and its funded pool, and credits; the books built from it for three owners pass the check across owners
// and hold, account by account and hold by hold, what LMDB holds. A directory with an active RFQ is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bucketsOf } from '../../src/records/ledger.js';
import { booksFromStore } from '../../src/engine/from-store.js';
import { checkOwners } from '../../src/engine/check.js';
import { ownerOfName } from '../../src/engine/routing.js';
import { openStore } from '../../src/store/db.js';
import { table } from '../../src/store/records.js';
import { contestConfig, createContest, enter, up } from '../helpers/contests.js';
import { client } from '../helpers/http.js';
import { connectMaker, registerMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { autoQuote, unsignedBody } from '../helpers/rfq.js';
import { startServer } from '../helpers/server.js';
import { putRawRecord } from '../helpers/store-writes.js';
import { fundedUser } from '../helpers/users.js';

const USDC = 1_000_000;

test('a data directory of today becomes three owners’ first snapshots, exact to the micro, and one with an active RFQ is refused', async () => {
  const server = await startServer();
  let dataDir: string;
  try {
    const maker = await connectMaker(server, await registerMaker(server, undefined, undefined, 100 * USDC));
    const quoting = autoQuote(maker, { odds: 4 });
    const taker = await fundedUser(server, 10 * USDC);
    const market = (await createMarket(server)).market_id;
    const filled = await client(server.baseUrl, taker.token).post(
      '/v1/rfq/unsigned?wait_ms=3000',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 2 * USDC }),
    );
    assert.equal(filled.body.status, 'completed', JSON.stringify(filled.body));
    quoting.stop();
    await maker.close();
    const withdrawing = await fundedUser(server, 5 * USDC);
    const withdrawal = await client(server.baseUrl, withdrawing.token).post('/v1/user/withdrawals', {
      amount_micros: USDC,
      destination: `0x${'5a'.repeat(20)}`,
      idempotency_key: randomUUID(),
    });
    assert.equal(withdrawal.status, 201, JSON.stringify(withdrawal.body));
    const contest = await createContest(server, contestConfig([market], { protocol_prize_pool_micros: 3 * USDC }));
    const entered = await enter(server, taker, contest.contest_id, [up(market)]);
    assert.equal(entered.status, 201, JSON.stringify(entered.body));
  } finally {
    await server.stop(); // runs today's ledger check on what it left
    dataDir = server.dataDir;
  }

  const store = openStore(dataDir);
  try {
    const owners = 3;
    const migration = booksFromStore(store, owners, ownerOfName(owners));
    assert.ok('books' in migration, 'refusal' in migration ? migration.refusal : '');
    const { books, firstRecords } = migration;
    const check = checkOwners(books.map((book, i) => ({ book, records: [firstRecords[i]!] })));
    assert.deepEqual(check.differences, []);
    assert.equal(check.inTransitMicros, 0n);
    // Every account's every bucket, on exactly its owner; every hold; every credit key.
    let accounts = 0;
    let lmdbTotalMicros = 0n;
    for (const { key: account, value } of table(store, 'accounts').getRange()) {
      accounts++;
      for (const bucket of bucketsOf(account)) {
        lmdbTotalMicros += BigInt(value[bucket] ?? '0');
        for (const book of books) {
          const expected = book.self === ownerOfName(owners)(account) ? BigInt(value[bucket] ?? '0') : 0n;
          assert.equal(book.bucket(account, bucket), expected, `${account} ${bucket} on owner ${book.self}`);
        }
      }
    }
    assert.equal(accounts, 4, 'the taker, the user withdrawing, the maker, the protocol');
    const holds = [...table(store, 'holds').getRange()];
    assert.ok(holds.some(({ key }) => key.endsWith(':lock')) && holds.some(({ key }) => key.startsWith('withdrawal:')));
    assert.ok(holds.some(({ key }) => key.endsWith(':pool')) && holds.some(({ value }) => value.bucket === 'at_risk'));
    assert.equal(
      books.reduce((n, book) => n + book.holds.size, 0),
      holds.length,
    );
    for (const { key, value } of holds)
      assert.equal(books[ownerOfName(owners)(value.account)]!.holds.get(key)?.amountMicros, BigInt(value.amountMicros));
    assert.ok([...table(store, 'credits').getKeys()].length > 0, 'the directory has credit keys');
    assert.equal(
      books.reduce((n, book) => n + book.creditKeys.size, 0),
      0,
      'they stay in LMDB, where the owners look them up',
    );
    assert.equal(check.totalMicros, lmdbTotalMicros);
    assert.equal(check.worldInMicros, lmdbTotalMicros, 'the openings bring in exactly what LMDB held');

    await putRawRecord(store, 'rfqActive', '01234567-89ab-7cde-8f01-23456789abcd', true);
    assert.deepEqual(booksFromStore(store, owners, ownerOfName(owners)), {
      refusal: 'the data directory has 1 active RFQs: start it once with PARLAYD_ENGINE=lmdb (it fails them), then on the journal engine',
    });
  } finally {
    await store.close();
  }
});
