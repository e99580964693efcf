// One owner per balance (issue 16; src/ledger/ledger.ts): a Ledger is built for the users of one shard, and
// a movement of any other user's money is a broken invariant (AssertionError) that writes nothing. Holds make
// every release, fill and settlement move exactly what was held for its reference, once. In process, on a
// real LMDB store.
import assert, { AssertionError } from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ledger, readBalance, readHold, readJournal } from '../../src/ledger/ledger.js';
import { shardOfUser } from '../../src/rfq/ids.js';
import { ShardBook, shardOwner } from '../../src/rfq/shard-book.js';
import { openStore, type Store } from '../../src/store/db.js';

const SHARDS = 2;

/** A fresh user id that shard `shard` of SHARDS owns. */
function userOfShard(shard: number): string {
  for (;;) {
    const userId = randomUUID();
    if (shardOfUser(userId, SHARDS) === shard) return userId;
  }
}

describe('ledger ownership and holds', () => {
  let dir: string;
  let store: Store;
  let ledger: Ledger;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'parlayd-ledger-'));
    store = openStore(dir);
    ledger = new Ledger(store, shardOwner(0, SHARDS));
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a movement of another shard's user fails an assertion and writes nothing", async () => {
    const foreign = userOfShard(1);
    await assert.rejects(
      store.transact(() => ledger.creditInTxn(foreign, 5n, 'credit:foreign', 1)),
      (err: unknown) => err instanceof AssertionError && /shard 0 of 2 may not move the money of user/.test(err.message),
    );
    assert.deepEqual(readBalance(store, foreign).availableMicros, 0n);
    assert.deepEqual(readJournal(store, foreign), []);
    // The owner's decision of a debit asserts the same.
    const book = new ShardBook(store, shardOwner(0, SHARDS));
    assert.throws(() => book.tryDebit(foreign, 1n), AssertionError);
  });

  it('its own users: reserve, fill and settle move exactly what is held, once', async () => {
    const own = userOfShard(0);
    await store.transact(() => {
      ledger.creditInTxn(own, 100n, 'credit:own', 1);
      ledger.reserveInTxn(own, 40n, 'rfq:a', 2);
    });
    assert.deepEqual(readHold(store, 'rfq:a'), { userId: own, bucket: 'reserved', amountMicros: '40' });
    // A fill beyond the reservation is a bug, and the transaction writes nothing.
    await assert.rejects(store.transact(() => ledger.fillInTxn('rfq:a', 41n, 3)), AssertionError);
    assert.equal(readBalance(store, own).reservedMicros, 40n);
    await store.transact(() => ledger.fillInTxn('rfq:a', 30n, 3));
    assert.deepEqual(readHold(store, 'rfq:a'), { userId: own, bucket: 'at_risk', amountMicros: '30' });
    assert.deepEqual(
      [readBalance(store, own).availableMicros, readBalance(store, own).reservedMicros, readBalance(store, own).atRiskMicros],
      [70n, 0n, 30n],
    );
    // A release now would name a hold in the wrong bucket: a bug.
    await assert.rejects(store.transact(() => ledger.releaseInTxn('rfq:a', 4)), AssertionError);
    assert.equal(await store.transact(() => ledger.settleAtRiskInTxn('rfq:a', 75n, 5)), true);
    assert.equal(await store.transact(() => ledger.settleAtRiskInTxn('rfq:a', 75n, 6)), false, 'settled once');
    const balance = readBalance(store, own);
    assert.deepEqual([balance.availableMicros, balance.atRiskMicros, balance.pnlMicros], [145n, 0n, 45n]);
    assert.equal(readHold(store, 'rfq:a'), undefined);
    assert.deepEqual(readJournal(store, own).map((j) => j.kind), ['credit', 'reserve', 'fill', 'settle_at_risk']);
  });

  it('a release returns what was held and a second release moves nothing', async () => {
    const own = userOfShard(0);
    await store.transact(() => {
      ledger.creditInTxn(own, 10n, `credit:${own}`, 1);
      ledger.reserveInTxn(own, 7n, `contest:x:${own}:0`, 1);
    });
    assert.equal(await store.transact(() => ledger.releaseInTxn(`contest:x:${own}:0`, 2)), 7n);
    assert.equal(await store.transact(() => ledger.releaseInTxn(`contest:x:${own}:0`, 3)), null);
    assert.equal(readBalance(store, own).availableMicros, 10n);
    // A reference is held once: reserving it again while held is a bug.
    await store.transact(() => ledger.reserveInTxn(own, 1n, 'rfq:twice', 4));
    await assert.rejects(store.transact(() => ledger.reserveInTxn(own, 1n, 'rfq:twice', 5)), AssertionError);
  });

  it('the book refuses a debit that committed and pending debits together do not cover, until they settle', async () => {
    const own = userOfShard(0);
    await store.transact(() => ledger.creditInTxn(own, 10n, `credit:${own}`, 1));
    const book = new ShardBook(store, shardOwner(0, SHARDS));
    const first = book.tryDebit(own, 6n);
    assert.ok(first !== null);
    assert.equal(book.tryDebit(own, 6n), null, 'the first debit is not written yet, but it is spent');
    const second = book.tryDebit(own, 4n);
    assert.ok(second !== null);
    first();
    second();
    assert.equal(book.pendingUsers, 0);
    assert.equal(book.spendableMicros(own), 10n, 'refused or failed at commit: nothing stays spent');
  });
});
