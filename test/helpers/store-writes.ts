// BYPASSES THE API AND ITS LISTENERS: writes straight into a data directory's LMDB. Only for states that no
// request can make, such as what a crash leaves between two commits; keep this file short. Everything else
// arranges through the routes (helpers/contests.ts, helpers/markets.ts) or the in-process harness
// (helpers/contests-in-process.ts).
import assert from 'node:assert/strict';
import { dueAtMsOf, dueKey } from '../../src/markets/due-index.js';
import { marketKey } from '../../src/markets/markets.js';
import type { Market } from '../../src/schemas/markets.js';
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
