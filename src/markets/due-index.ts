// Main thread. The index of unresolved markets by resolution time (contract section 12): LMDB database
// `marketsDue`, key `${dueAtMs, 16 digits}:${marketKey}` -> true. Written in the transaction that creates a
// market, removed in the one that resolves it (market-table.ts), so it holds exactly the OPEN markets. What it
// serves, each with one range read in key order and never a scan of every market:
// - the admin's due list (GET /v1/admin/markets?due=true), oldest first, paged by key;
// - the auto-void sweep (oracle/auto-void.ts): the markets due more than the grace ago, oldest first;
// - the oracle's start-up (oracle/resolver.ts): the unresolved price windows, to index them in memory.
import assert from 'node:assert/strict';
import type { Market, StoredMarket } from '../contract/markets.js';
import type { Db, Store } from '../store/db.js';
import { metaTable, table } from '../store/records.js';

/** The due index's layout version, in `meta`: absent on a data directory written before it existed. */
const DUE_INDEX_META_KEY = 'index:marketsDue';
const DUE_INDEX_VERSION = 1;
/** Markets read per transaction while building the index on an old data directory (~1 ms each batch). */
const BUILD_BATCH_MARKETS = 1000;

const MS_DIGITS = 16; // MAX_DATE_MS (8.64e15) has 16 digits
const DUE_KEY_RE = /^[0-9]{16}:[0-9]{16}$/;

/**
 * When a market is due (contract section 12): a price window at its end; a mention market at its
 * resolution_time_ms, else its live_ends_at_ms, else (our decision, both are optional) its
 * betting_closes_at_ms, after which nobody can bet on it any more.
 */
export function dueAtMsOf(market: StoredMarket): number {
  if (market.kind === 'price') {
    assert.ok(market.window_end_ms !== undefined, `price market ${market.market_id} has no window end`);
    return market.window_end_ms;
  }
  const dueAtMs = market.resolution_time_ms ?? market.live_ends_at_ms ?? market.betting_closes_at_ms;
  assert.ok(dueAtMs !== null, `mention market ${market.market_id} has no betting close`);
  return dueAtMs;
}

export function dueKey(dueAtMs: number, marketId: number): string {
  assert.ok(Number.isSafeInteger(dueAtMs) && dueAtMs >= 0 && Number.isSafeInteger(marketId) && marketId >= 1);
  return `${String(dueAtMs).padStart(MS_DIGITS, '0')}:${String(marketId).padStart(16, '0')}`;
}

export function marketIdOfDueKey(key: string): number {
  return Number(key.slice(MS_DIGITS + 1));
}

export function dueAtMsOfDueKey(key: string): number {
  return Number(key.slice(0, MS_DIGITS));
}

/** The first key after every key due at or before `atMs`. */
function endKeyAfter(atMs: number): string {
  return `${String(atMs).padStart(MS_DIGITS, '0')}:~`;
}

/** A due list cursor's position (contract/paging.ts): the page's last due key. */
export const isDuePosition = (values: readonly unknown[]): values is [string] =>
  values.length === 1 && typeof values[0] === 'string' && DUE_KEY_RE.test(values[0]);

/**
 * Keys of markets due at or before `atMs`, oldest first, strictly after `afterKey` (null: from the start),
 * at most `limit`. One range read; reads only the keys it returns (plus one).
 */
export function dueKeysUpTo(index: Db<true>, atMs: number, afterKey: string | null, limit: number): string[] {
  const keys: string[] = [];
  const range = index.getKeys({ start: afterKey ?? '', end: endKeyAfter(atMs), limit: limit + 1 });
  for (const key of range) {
    if (key === afterKey) continue;
    if (keys.length === limit) break;
    keys.push(key);
  }
  return keys;
}

/** Every key of the index in due order (the oracle's start-up reads the unresolved windows from it). */
export function allDueKeys(index: Db<true>): Iterable<string> {
  return index.getKeys();
}

/**
 * Builds the index once on a data directory written before it existed (every OPEN market), in batches, and
 * records its version so later starts skip it. A no-op on a directory that has it (one meta read).
 */
export async function buildDueIndexIfMissing(store: Store): Promise<number> {
  const meta = metaTable<number>(store);
  if (meta.get(DUE_INDEX_META_KEY) === DUE_INDEX_VERSION) return 0;
  const markets = table(store, 'markets');
  const index = table(store, 'marketsDue');
  let afterKey: string | null = null;
  let indexed = 0;
  for (;;) {
    const batch: { key: string; value: StoredMarket }[] = [];
    for (const entry of markets.getRange({ start: afterKey ?? '', limit: BUILD_BATCH_MARKETS + 1 })) {
      if (entry.key === afterKey) continue;
      if (batch.length === BUILD_BATCH_MARKETS) break;
      batch.push(entry);
    }
    if (batch.length === 0) break;
    await store.transact(() => {
      for (const { value } of batch) {
        if (value.status !== 'OPEN') continue;
        void index.put(dueKey(dueAtMsOf(value), value.market_id), true);
        indexed++;
      }
    });
    afterKey = batch.at(-1)!.key;
  }
  await store.transact(() => void meta.put(DUE_INDEX_META_KEY, DUE_INDEX_VERSION));
  return indexed;
}

/**
 * A market record as the API shows it: the oracle fields of a record written before them read as null. A
 * record that has them (every one written since) is returned as read: Markets.get runs per RFQ leg, and a
 * spread copy per call is an allocation shape V8 keeps alive (docs/performance.md, "Allocation shapes").
 */
export function withOracleFields(stored: StoredMarket): Market {
  if (stored.resolved_by !== undefined && stored.start_price_e8 !== undefined && stored.end_price_e8 !== undefined) return stored as Market;
  // Only records from before the oracle get here (rarer every day): the copy is fine.
  return {
    ...stored,
    resolved_by: stored.resolved_by ?? null,
    start_price_e8: stored.start_price_e8 ?? null,
    end_price_e8: stored.end_price_e8 ?? null,
  };
}
