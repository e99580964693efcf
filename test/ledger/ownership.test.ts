// The two-sided ledger (src/ledger/ledger.ts; contract section 11), in process on a real LMDB store. A user's
// available is debited only by its owner (an AssertionError that writes nothing otherwise); a maker's is
// checked inside the transaction; holds make every release, fill and settlement move exactly what was held
// for its reference, once; and after every step the ledger check (check.ts) finds every bucket equal to
// what its transfers make it, none negative, and money conserved.
import assert, { AssertionError } from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { lockRef, makerAccount, poolRef, PROTOCOL, userAccount } from '../../src/records/ledger.js';
import { checkTransfers } from '../../src/ledger/check.js';
import { Ledger, NO_USERS, readAccount, readHold, readJournal, readUserBalance } from '../../src/ledger/ledger.js';
import type { PositionOutcome } from '../../src/records/ledger.js';
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

const newMaker = () => `0x${randomUUID().replaceAll('-', '').padEnd(40, '0')}`;

describe('the two-sided ledger', () => {
  let dir: string;
  let store: Store;
  let ledger: Ledger;
  let main: Ledger;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'parlayd-ledger-'));
    store = openStore(dir);
    ledger = new Ledger(store, shardOwner(0, SHARDS));
    main = new Ledger(store, NO_USERS);
  });
  after(async () => {
    assert.equal(checkTransfers(store).ok, true, JSON.stringify(checkTransfers(store)));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const assertChecked = () => {
    const check = checkTransfers(store);
    assert.ok(check.ok, JSON.stringify(check));
    return check;
  };

  /** A user of shard 0 with `credit` available, and a maker with `collateral` available. */
  async function parties(credit: bigint, collateral: bigint) {
    const userId = userOfShard(0);
    const maker = newMaker();
    await store.transact(() => {
      ledger.credit(userAccount(userId), credit, `credit:${userId}`, 1);
      if (collateral > 0n) main.credit(makerAccount(maker), collateral, `credit:${maker}`, 1);
    });
    return { userId, maker };
  }

  it("a debit of another shard's user fails an assertion and writes nothing; a credit to it needs no owner", async () => {
    const foreign = userOfShard(1);
    await store.transact(() => main.credit(userAccount(foreign), 5n, `credit:${foreign}`, 1));
    await assert.rejects(
      store.transact(() => ledger.reserve(foreign, 5n, `rfq:${foreign}`, 2)),
      (err: unknown) => err instanceof AssertionError && /shard 0 of 2 may not spend the money of user/.test(err.message),
    );
    assert.deepEqual(readUserBalance(store, foreign), {
      availableMicros: 5n,
      reservedMicros: 0n,
      atRiskMicros: 0n,
      pendingWithdrawalMicros: 0n,
    });
    assert.equal(readJournal(store, userAccount(foreign)).length, 1, 'only the credit');
    // The owner's decision of a debit asserts the same.
    assert.throws(() => new ShardBook(store, shardOwner(0, SHARDS)).tryDebit(foreign, 1n), AssertionError);
    assertChecked();
  });

  it("a fill moves the stake to at risk, the rest back, and the liability into the maker's locked, all or nothing", async () => {
    const { userId, maker } = await parties(100n, 50n);
    const ref = `rfq:${randomUUID()}`;
    await store.transact(() => ledger.reserve(userId, 40n, ref, 2));
    // A fill beyond the reservation is a bug, and the transaction writes nothing.
    await assert.rejects(
      store.transact(() => ledger.fill(ref, 41n, maker, 10n, 3)),
      AssertionError,
    );
    // A liability beyond the maker's available is refused, and nothing is written.
    assert.equal(await store.transact(() => ledger.fill(ref, 30n, maker, 51n, 3)), false);
    assert.equal(readUserBalance(store, userId).reservedMicros, 40n);
    assert.equal(await store.transact(() => ledger.fill(ref, 30n, maker, 45n, 3)), true);
    assert.deepEqual(readUserBalance(store, userId), {
      availableMicros: 70n,
      reservedMicros: 0n,
      atRiskMicros: 30n,
      pendingWithdrawalMicros: 0n,
    });
    assert.deepEqual(readAccount(store, makerAccount(maker)), { available: 5n, locked: 45n, pending_withdrawal: 0n });
    assert.deepEqual(readHold(store, ref), { account: userAccount(userId), bucket: 'at_risk', amountMicros: '30' });
    assert.deepEqual(readHold(store, lockRef(ref)), { account: makerAccount(maker), bucket: 'locked', amountMicros: '45' });
    // A release now would name a hold in the wrong bucket: a bug.
    await assert.rejects(
      store.transact(() => ledger.release(ref, 4)),
      AssertionError,
    );
    assertChecked();
  });

  const outcomes: Array<[PositionOutcome, { taker: bigint; maker: bigint }]> = [
    ['won', { taker: 70n + 30n + 45n, maker: 5n }],
    ['lost', { taker: 70n, maker: 5n + 45n + 30n }],
    ['voided', { taker: 70n + 30n, maker: 5n + 45n }],
  ];
  for (const [outcome, want] of outcomes) {
    it(`a position that ${outcome === 'voided' ? 'is voided' : outcome} settles both sides to the micro, once`, async () => {
      const { userId, maker } = await parties(100n, 50n);
      const ref = `rfq:${randomUUID()}`;
      await store.transact(() => {
        ledger.reserve(userId, 40n, ref, 2);
        assert.ok(ledger.fill(ref, 30n, maker, 45n, 3));
      });
      assert.equal(await store.transact(() => ledger.settlePosition(ref, maker, outcome, 5)), true);
      assert.equal(await store.transact(() => ledger.settlePosition(ref, maker, outcome, 6)), false, 'settled once');
      assert.deepEqual(readUserBalance(store, userId), {
        availableMicros: want.taker,
        reservedMicros: 0n,
        atRiskMicros: 0n,
        pendingWithdrawalMicros: 0n,
      });
      assert.deepEqual(readAccount(store, makerAccount(maker)), { available: want.maker, locked: 0n, pending_withdrawal: 0n });
      assert.equal(readHold(store, ref), undefined);
      assert.equal(readHold(store, lockRef(ref)), undefined);
      const kinds = readJournal(store, userAccount(userId)).map((row) => row.kind);
      assert.deepEqual(kinds.slice(0, 4), ['credit', 'reserve', 'fill', 'release']);
      assertChecked();
    });
  }

  it("a contest's pool: the prize from the protocol, the stakes collected, the prizes paid, the rest returned", async () => {
    const contestId = randomUUID();
    await store.transact(() => main.credit(PROTOCOL, 1_000n, `credit:protocol-${contestId}`, 1));
    const before = readAccount(store, PROTOCOL);
    assert.equal(await store.transact(() => main.openPool(contestId, before.available + 1n, 2)), false, 'the protocol cannot fund it');
    assert.equal(await store.transact(() => main.openPool(contestId, 100n, 2)), true);
    const [a, b] = [userOfShard(0), userOfShard(0)];
    const refA = `contest:${contestId}:${a}:0`;
    const refB = `contest:${contestId}:${b}:0`;
    await store.transact(() => {
      for (const userId of [a, b]) ledger.credit(userAccount(userId), 10n, `credit:${contestId}:${userId}`, 1);
      ledger.reserve(a, 10n, refA, 3);
      ledger.reserve(b, 10n, refB, 3);
    });
    await store.transact(() => {
      assert.ok(ledger.collect(refA, contestId, 4));
      assert.ok(ledger.collect(refB, contestId, 4));
      assert.equal(ledger.collect(refA, contestId, 4), false, 'collected once');
    });
    assert.deepEqual(readHold(store, poolRef(contestId)), { account: PROTOCOL, bucket: 'committed', amountMicros: '120' });
    // A prize beyond the pot is a bug.
    await assert.rejects(
      store.transact(() => ledger.payPrize(refA, contestId, a, 121n, 5)),
      AssertionError,
    );
    await store.transact(() => ledger.payPrize(refA, contestId, a, 119n, 5));
    assert.equal(await store.transact(() => main.closePool(contestId, 6)), 1n);
    assert.equal(await store.transact(() => main.closePool(contestId, 7)), null, 'closed once');
    assert.equal(readUserBalance(store, a).availableMicros, 119n);
    assert.equal(readUserBalance(store, b).availableMicros, 0n);
    assert.deepEqual(readAccount(store, PROTOCOL), { available: before.available - 100n + 1n, committed: before.committed });
    assertChecked();
  });

  it('a withdrawal is pending, then completed (money leaves: withdrawn) or failed (back to available), once', async () => {
    const { userId, maker } = await parties(100n, 50n);
    const before = assertChecked();
    await store.transact(() => ledger.withdraw(userAccount(userId), 60n, `withdrawal:${userId}`, 2));
    assert.equal(
      await store.transact(() => main.withdraw(makerAccount(maker), 51n, `withdrawal:${maker}`, 2)),
      false,
      'the maker is short',
    );
    assert.equal(await store.transact(() => main.withdraw(makerAccount(maker), 50n, `withdrawal:${maker}`, 2)), true);
    assert.deepEqual(readUserBalance(store, userId), {
      availableMicros: 40n,
      reservedMicros: 0n,
      atRiskMicros: 0n,
      pendingWithdrawalMicros: 60n,
    });
    assert.equal(await store.transact(() => main.finishWithdrawal(`withdrawal:${userId}`, true, 3)), true);
    assert.equal(await store.transact(() => main.finishWithdrawal(`withdrawal:${userId}`, false, 4)), false, 'final');
    assert.equal(await store.transact(() => main.finishWithdrawal(`withdrawal:${maker}`, false, 3)), true);
    assert.deepEqual(readUserBalance(store, userId), {
      availableMicros: 40n,
      reservedMicros: 0n,
      atRiskMicros: 0n,
      pendingWithdrawalMicros: 0n,
    });
    assert.deepEqual(readAccount(store, makerAccount(maker)), { available: 50n, locked: 0n, pending_withdrawal: 0n });
    const after = assertChecked();
    assert.equal(BigInt(after.withdrawn_micros) - BigInt(before.withdrawn_micros), 60n);
    assert.equal(BigInt(after.total_micros), BigInt(before.total_micros) - 60n);
  });

  it('a step is written once per reference: a second reservation of a held reference is a bug', async () => {
    const { userId } = await parties(10n, 0n);
    await store.transact(() => ledger.reserve(userId, 1n, 'rfq:twice', 4));
    await assert.rejects(
      store.transact(() => ledger.reserve(userId, 1n, 'rfq:twice', 5)),
      AssertionError,
    );
    assert.equal(await store.transact(() => ledger.release('rfq:twice', 6)), 1n);
    assert.equal(await store.transact(() => ledger.release('rfq:twice', 7)), null);
    assertChecked();
  });

  it('the check finds a bucket changed behind the transfers, and money that was not conserved', async () => {
    const { userId } = await parties(10n, 0n);
    assertChecked();
    const accounts = store.db<Record<string, string>>('accounts');
    const record = accounts.get(userAccount(userId))!;
    await store.transact(() => void accounts.put(userAccount(userId), { ...record, available: '11' }));
    const check = checkTransfers(store);
    assert.equal(check.ok, false);
    assert.deepEqual(check.differences, [
      { account: userAccount(userId), bucket: 'available', expected_micros: '10', actual_micros: '11', reason: 'transfers' },
    ]);
    assert.equal(BigInt(check.total_micros), BigInt(check.credited_micros) - BigInt(check.withdrawn_micros) + 1n);
    await store.transact(() => void accounts.put(userAccount(userId), record));
    assertChecked();
  });

  it('the book refuses a debit that committed and pending debits together do not cover, until they settle', async () => {
    const { userId } = await parties(10n, 0n);
    const book = new ShardBook(store, shardOwner(0, SHARDS));
    const first = book.tryDebit(userId, 6n);
    assert.ok(first !== null);
    assert.equal(book.tryDebit(userId, 6n), null, 'the first debit is not written yet, but it is spent');
    const second = book.tryDebit(userId, 4n);
    assert.ok(second !== null);
    first();
    second();
    assert.equal(book.pendingUsers, 0);
    assert.equal(book.spendableMicros(userId), 10n, 'refused or failed at commit: nothing stays spent');
  });
});
