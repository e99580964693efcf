// BYPASSES THE API AND ITS LISTENERS: writes straight into a data directory's LMDB. Only for states that no
// request can make, such as what a crash leaves between two commits; keep this file short. Everything else
// arranges through the routes (helpers/contests.ts, helpers/markets.ts) or the in-process harness
// (helpers/contests-in-process.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ContestRecords } from '../../src/contests/contest-records.js';
import { entryRef } from '../../src/records/contests.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { dueAtMsOf, dueKey } from '../../src/markets/due-index.js';
import { marketKey } from '../../src/records/markets.js';
import type { Market } from '../../src/contract/markets.js';
import { rfqRef, type RfqRecord } from '../../src/records/rfqs.js';
import { DEFAULT_ORDER_TYPE } from '../../src/contract/rfq.js';
import { createdWrites } from '../../src/rfq/rfq-records.js';
import { applyWrites } from '../../src/store/records.js';
import { shardOwner } from '../../src/rfq/shard-book.js';
import { openStore, type DbName, type Store } from '../../src/store/db.js';

/**
 * Writes markets RESOLVED with `outcome` straight into `store`, without running any resolution listener: the
 * state a crash leaves between a market's durable resolution and its contests' (the next start's recover()
 * finishes them).
 */
export async function resolveMarketsInStore(store: Store, marketIds: readonly number[], outcome: 'YES' | 'NO'): Promise<void> {
  await store.transact(() => {
    for (const marketId of marketIds) {
      const market = store.db<Market>('markets').get(marketKey(marketId));
      assert.ok(market !== undefined, `market ${marketId}`);
      void store.db<Market>('markets').put(marketKey(marketId), { ...market, status: 'RESOLVED', outcome, resolution_time_ms: Date.now() });
      // As Markets.resolve does in the same transaction: a resolved market leaves the due index.
      void store.db<true>('marketsDue').remove(dueKey(dueAtMsOf(market), marketId));
    }
  });
}

/** resolveMarketsInStore on the LMDB of a stopped server. */
export async function resolveMarketsWhileStopped(dataDir: string, marketIds: readonly number[], outcome: 'YES' | 'NO'): Promise<void> {
  const store = openStore(dataDir);
  try {
    await resolveMarketsInStore(store, marketIds, outcome);
  } finally {
    await store.close();
  }
}

/**
 * Puts `value` at `key` in `db` as it is, whatever the database's record type: a record no writer of the
 * service can make (they are typed), to see that the record modules' checked reads refuse it
 * (store/record-check.ts).
 */
export async function putRawRecord(store: Store, db: DbName, key: string, value: unknown): Promise<void> {
  await store.transact(() => {
    void store.db<unknown>(db).put(key, value);
  });
}

/** The ledger as the one shard of a service started with PARLAYD_SHARDS=1 (the tests' default) moves money. */
export const oneShardLedger = (store: Store) => new Ledger(store, shardOwner(0, 1));

/**
 * An RFQ record of `user` as a shard's create writes it (pending, marked active), that no shard holds: the
 * service never ends it (or, `isEnded`, a record that ended as a timeout; `isUnmarked`, pending but not marked
 * active, so no restart ends it either). `reservedMicros`: money reserved under its reference, or null for
 * none held. Returns its request id.
 */
export async function writeStrandedRfq(
  store: Store,
  user: { userId: string; address: string },
  rfq: { wagerMicros: bigint; reservedMicros: bigint | null; expiresAtMs: number; isEnded?: boolean; isUnmarked?: boolean },
): Promise<string> {
  const requestId = randomUUID();
  const nowMs = Date.now();
  await store.transact(() => {
    const record: RfqRecord = {
      requestId,
      userId: user.userId,
      wallet: user.address,
      kind: 'unsigned',
      legs: [{ marketId: 1, direction: 'up' }],
      wagerMicros: rfq.wagerMicros.toString(),
      minOddsE4: 10_001,
      toleranceBps: 0,
      orderType: DEFAULT_ORDER_TYPE,
      isShielded: false,
      createdAtMs: nowMs,
      expiresAtMs: rfq.expiresAtMs,
      status: rfq.isEnded === true ? 'timeout' : 'pending',
      quotesReceived: 0,
      fill: null,
      error: null,
      terminalAtMs: rfq.isEnded === true ? nowMs : null,
    };
    applyWrites(
      store,
      createdWrites(
        record,
        { key: `u:${user.userId}:${requestId}`, contentHash: 'stranded' },
        rfq.isEnded !== true && rfq.isUnmarked !== true,
      ),
    );
    if (rfq.reservedMicros !== null) oneShardLedger(store).reserve(user.userId, rfq.reservedMicros, rfqRef(requestId), nowMs);
  });
  return requestId;
}

/**
 * Moves a contest's money behind its back, the way a bug in its settlement would: `release` returns these
 * entries' stakes to their users (unsettled, or `settled` with a void's refund record), and `closePool`
 * returns its pool to the protocol; the contest record stays as it is (open).
 */
export async function refundBehindContest(
  store: Store,
  contestId: string,
  what: { entries: number; settled: boolean; closePool: boolean },
): Promise<void> {
  const records = new ContestRecords(store);
  const ledger = oneShardLedger(store);
  const nowMs = Date.now();
  await store.transact(() => {
    for (const { value: entry } of records.entriesAfter(contestId, null, what.entries)) {
      assert.ok(ledger.release(entryRef(entry), nowMs) !== null, `${entryRef(entry)} holds its stake`);
      if (what.settled) {
        const outcomes = entry.picks.map(() => 'voided' as const);
        records.putEntry({ ...entry, settlement: { outcomes, payoutMicros: entry.stakeMicros, netPayoutMicros: 0, rank: null } });
      }
    }
    if (what.closePool) assert.ok(ledger.closePool(contestId, nowMs) !== null, `contest ${contestId} has its pool`);
  });
}
