// Any thread for the free functions (shard workers read markets directly from LMDB); MarketTable on the main
// thread. The market records every part of markets/ reads and writes through: the read of one market, and
// the writes of a new market and of a resolved one, each with its entry in the due index.
//
// Status stays OPEN until resolution; betting closes at betting_closes_at_ms (the window end for price
// markets). `isOpenForBetting` is the one test every part (RFQ legs, contest picks) applies.
//
// Every new market's times are asserted to be safe integers and dates before it is written.
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';
import { MAX_DATE_MS, type Market, type StoredMarket } from '../contract/markets.js';
import { marketKey } from '../records/markets.js';
import { dueAtMsOf, dueKey, withOracleFields } from './due-index.js';
import { table } from '../store/records.js';

/**
 * A broken invariant, not a user error: inputs are bounded by their schemas (Ms) and price windows by their
 * reach, so a market about to be written always has times that are safe integers and dates (0..MAX_DATE_MS).
 */
function assertMarketTimes(market: Market): void {
  const times = [
    market.window_start_ms,
    market.window_end_ms,
    market.betting_closes_at_ms,
    market.live_ends_at_ms,
    market.resolution_time_ms,
  ];
  for (const timeMs of times) {
    if (timeMs === undefined || timeMs === null) continue;
    assert.ok(Number.isSafeInteger(timeMs) && timeMs >= 0 && timeMs <= MAX_DATE_MS, `market time ${timeMs} is not a date`);
  }
}

/**
 * Any thread: a market as last committed (this thread's snapshot; inside a write transaction, the latest
 * commit). For the RFQ shards, which hold no Markets object: the one read of the markets database outside it.
 */
export function readStoredMarket(store: Store, marketId: number): StoredMarket | undefined {
  return table(store, 'markets').get(marketKey(marketId));
}

export function isOpenForBetting(market: Pick<Market, 'status' | 'betting_closes_at_ms'>, nowMs: number): boolean {
  return market.status === 'OPEN' && (market.betting_closes_at_ms === null || nowMs < market.betting_closes_at_ms);
}

/** Told of every market record as it is written, inside its transaction (Markets.onWritten). */
export type MarketWrittenListener = (market: StoredMarket) => void;

/** Every market record, in key order: what a cluster's shard node is given when it joins (ShardPoolOptions.allMarkets). */
export function* allStoredMarkets(store: Store): Iterable<StoredMarket> {
  for (const { value } of table(store, 'markets').getRange()) yield value;
}

/**
 * `put` of market records as another process wrote them (a cluster's gateway: cluster/shard-door.ts), in the
 * caller's transaction: a shard node's copy, which its RFQ shards read as they read the service's.
 */
/** Up to `limit` market records after the key `afterKey` (null: from the first), in key order. */
export function storedMarketsAfter(store: Store, afterKey: string | null, limit: number): StoredMarket[] {
  const range = table(store, 'markets').getRange(afterKey === null ? { limit } : { start: afterKey, exclusiveStart: true, limit });
  return [...range].map(({ value }) => value);
}

export function putCopiedMarketsInTxn(store: Store, markets: readonly StoredMarket[]): void {
  for (const market of markets) void table(store, 'markets').put(marketKey(market.market_id), market);
}

export class MarketTable {
  /** Added by Markets.onWritten: a cluster's gateway hands each written market to its shard nodes. */
  readonly writtenListeners: MarketWrittenListener[] = [];

  constructor(private readonly store: Store) {}

  private get markets() {
    return table(this.store, 'markets');
  }

  private get dueIndex() {
    return table(this.store, 'marketsDue');
  }

  get(marketId: number): Market | undefined {
    const stored = this.markets.get(marketKey(marketId));
    return stored === undefined ? undefined : withOracleFields(stored);
  }

  /** A market record by its key (marketKey), as an index of market keys names it; undefined if absent. */
  getStoredByKey(key: string): StoredMarket | undefined {
    return this.markets.get(key);
  }

  /** `put` of a new market: the record and its entry in the due index (due-index.ts), in the caller's transaction. */
  putNewInTxn(market: Market): void {
    assertMarketTimes(market);
    assert.equal(market.status, 'OPEN');
    void this.markets.put(marketKey(market.market_id), market);
    void this.dueIndex.put(dueKey(dueAtMsOf(market), market.market_id), true);
    for (const listener of this.writtenListeners) listener(market);
  }

  /**
   * `put` of a resolved market over its open record `market`: the record, and its entry out of the due index,
   * in the caller's transaction (resolution.ts decides `next`).
   */
  putResolvedInTxn(marketId: number, market: Market, next: Market): void {
    void this.markets.put(marketKey(marketId), next);
    // Keyed by the due time of the record as it was: resolution rewrites resolution_time_ms.
    const removed = this.dueIndex.removeSync(dueKey(dueAtMsOf(market), marketId));
    assert.ok(removed, `open market ${marketId} was missing from the due index`);
    for (const listener of this.writtenListeners) listener(next);
  }
}
