// The journal engine's money ops (src/rfq/journal-money.ts) on a real owner (engine/owner-runtime.ts: its
// journal in a temp dir, its read model on a real LMDB environment): a contest batch whose prize the pool
// cannot cover yet (its stakes still on their way from other shards) fails OVERLOADED and leaves that entry
// unsettled, so the settlement's next attempt pays it; it must never count the entry as paid.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { entryKey, entryRef, type EntryRecord } from '../../src/records/contests.js';
import { settledEntryWrite } from '../../src/contests/contest-records.js';
import { OwnerRuntime } from '../../src/engine/owner-runtime.js';
import { PeerLinks } from '../../src/engine/peer-links.js';
import { ApiError } from '../../src/lib/errors.js';
import { PROTOCOL, userAccount } from '../../src/records/ledger.js';
import { checkLedger } from '../../src/ledger/check.js';
import { JournalMoney } from '../../src/rfq/journal-money.js';
import type { EntrySettlement, MoneyOp } from '../../src/ledger/money-ops.js';
import { openStore } from '../../src/store/db.js';

const CONTEST = 'c0ffee00-0000-4000-8000-000000000000';
const STAKE = 100n;
const T0 = 1_700_000_000_000;

test('a prize the pool cannot cover after its retries fails the batch OVERLOADED, unpaid and unsettled; the next attempt pays it once', async (t) => {
  const { runtime, store, money, failures } = openOwner(t);
  const ownerCall = (call: Extract<MoneyOp, { op: 'owner_call' }>['call']) => money.money({ op: 'owner_call', call, facts: [] });

  await ownerCall({ op: 'credit', account: PROTOCOL, amountMicros: 1_000n, key: 'fund-protocol' });
  const entrants = ['winner', 'loser', 'late'];
  for (const userId of entrants) await ownerCall({ op: 'credit', account: userAccount(userId), amountMicros: 500n, key: `fund-${userId}` });
  await ownerCall({ op: 'open_pool', contestId: CONTEST, amountMicros: 0n });

  const entries = new Map<string, EntryRecord>();
  const enter = async (userId: string) => {
    const entry: EntryRecord = {
      contestId: CONTEST,
      userId,
      entryIndex: 0,
      seq: entries.size,
      createdAtMs: T0,
      picks: [],
      stakeMicros: Number(STAKE),
      settlement: null,
    };
    entries.set(userId, entry);
    const key = entryKey(CONTEST, userId, 0);
    await money.money({
      op: 'reserve',
      userId,
      amountMicros: String(STAKE),
      ref: refOf(userId),
      writes: [{ db: 'contestEntries', key, value: entry }],
      uniqueKeys: [],
      atMs: T0,
    });
    const collected = await money.money({ op: 'collect_entries', contestId: CONTEST, refs: [refOf(userId)], atMs: T0 });
    assert.deepEqual(collected, { op: 'collect_entries', collected: 1 });
  };
  await enter('winner');
  await enter('loser');

  // The batch: the winner's prize is more than the two stakes collected so far (200); the loser's prize is 0.
  const batch = (): EntrySettlement[] =>
    (
      [
        ['winner', 250n],
        ['loser', 0n],
      ] as const
    ).map(([userId, payout]) => {
      const entry = entries.get(userId)!;
      const key = entryKey(CONTEST, entry.userId, 0);
      return {
        ref: refOf(entry.userId),
        userId: entry.userId,
        payoutMicros: String(payout),
        write: settledEntryWrite(key, {
          ...entry,
          settlement: { outcomes: [], payoutMicros: Number(payout), netPayoutMicros: Number(payout - STAKE), rank: 1 },
        }),
      };
    });
  const settle = () => money.money({ op: 'settle_entries', contestId: CONTEST, entries: batch(), atMs: T0 });

  await assert.rejects(settle(), (err: unknown) => err instanceof ApiError && err.code === 'OVERLOADED');
  const read = (userId: string) => runtime.read('contestEntries', entryKey(CONTEST, userId, 0));
  assert.equal(read('winner')?.settlement, null, 'the unpaid prize leaves its entry unsettled');
  assert.notEqual(read('loser')?.settlement, null, 'the rest of the batch settled, with its money');
  assert.equal(runtime.book.available(userAccount('winner')), 500n - STAKE, 'no prize paid');

  // The third stake arrives in the pool: the same batch again pays the prize, and only it.
  await enter('late');
  assert.deepEqual(await settle(), { op: 'settle_entries', settled: 1 });
  assert.equal(runtime.book.available(userAccount('winner')), 500n - STAKE + 250n);
  assert.deepEqual(await settle(), { op: 'settle_entries', settled: 0 }, 'paid once');

  const answer = await ownerCall({ op: 'close_pool', contestId: CONTEST, expectedMicros: 3n * STAKE - 250n });
  assert.deepEqual(answer, { op: 'owner_call', answer: { ok: true, isMoved: true } });
  assert.equal(runtime.book.available(PROTOCOL), 1_000n + 3n * STAKE - 250n);
  await runtime.barrier();
  assert.deepEqual(checkLedger(store).differences, []);
  assert.deepEqual(failures, []);
});

/** One owner (0, alone, owning every account) on a temp dir, and its money ops; closed with the test. */
function openOwner(t: TestContext) {
  const root = mkdtempSync(join(tmpdir(), 'parlayd-journal-money-'));
  const store = openStore(join(root, 'lmdb'));
  const failures: Error[] = [];
  const runtime = new OwnerRuntime({
    dir: join(root, 'owner-0'),
    self: 0,
    ownerOf: () => 0,
    store,
    links: (deliver) => new PeerLinks(0, new Map(), deliver),
    limits: { lockTimeoutMs: 2_000, lockQueryMs: 2_000, resendMs: 100, resendPerTick: 256 },
    tickMs: 20,
    snapshotEveryRecords: 50_000,
    maxPendingBytes: 2 << 20,
    nowMs: () => T0,
    onFailure: (err) => failures.push(err),
  });
  t.after(async () => {
    await runtime.close();
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });
  return { runtime, store, money: new JournalMoney(runtime, store, { delayMs: 1, tries: 3 }), failures };
}

test("an entry's reserve sent again with its idempotency key (its answer lost) is answered as the first: reserved once", async (t) => {
  const { runtime, store, money, failures } = openOwner(t);
  await money.money({ op: 'owner_call', call: { op: 'credit', account: userAccount('u'), amountMicros: 500n, key: 'fund-u' }, facts: [] });
  const reserve = (entryIndex: number): MoneyOp => ({
    op: 'reserve',
    userId: 'u',
    amountMicros: String(STAKE),
    ref: entryRef({ contestId: CONTEST, userId: 'u', entryIndex }),
    writes: [{ db: 'entryKeys', key: 'u:key', value: { contestId: CONTEST, entryIndex, contentHash: 'h', reservedMicros: String(STAKE) } }],
    uniqueKeys: [{ db: 'entryKeys', key: 'u:key' }],
    atMs: T0,
  });
  assert.deepEqual(await money.money(reserve(0)), { op: 'reserve' });
  assert.deepEqual(await money.money(reserve(0)), { op: 'reserve' }, 'the same call again: its own key, its own hold');
  assert.equal(runtime.book.available(userAccount('u')), 500n - STAKE, 'reserved once');
  // Another entry under the key is still refused.
  await assert.rejects(money.money(reserve(1)), (err: unknown) => err instanceof ApiError && err.code === 'IDEMPOTENCY_CONFLICT');
  assert.equal(runtime.book.available(userAccount('u')), 500n - STAKE);
  // Released (as a void refunds it), the hold is gone and the ledger whole.
  await money.money({
    op: 'owner_call',
    call: { op: 'release', ref: entryRef({ contestId: CONTEST, userId: 'u', entryIndex: 0 }) },
    facts: [],
  });
  assert.equal(runtime.book.available(userAccount('u')), 500n);
  await runtime.barrier();
  assert.deepEqual(failures, []);
  assert.deepEqual(checkLedger(store).differences, []);
});

function refOf(userId: string): string {
  return entryRef({ contestId: CONTEST, userId, entryIndex: 0 });
}
