// Main thread; reads only. GET /v1/mm/fills (contract section 11, Views): a maker's fills, newest first.
//
// Why a merge: `fills` is keyed `${maker}:${request_id}`, and a request id is the owning shard's byte, then the
// RFQ's creation time, then random bits (ids.ts newRequestId). So within one shard byte key order is time
// order, but across shards it is not: one reverse range would list shard 1's fills after all of shard 0's.
// `makerTakerFills` is in taker order, which is no better. Instead of a new index (a write per fill, and a
// migration), a page merges the maker's fills per shard byte, each a reverse range, newest first:
//   - the shard bytes present are found by seeking (one seek per byte, at most 256: ids.ts MAX_SHARDS);
//   - the merge order is the id without its shard byte (creation time, then the random bits), then the byte,
//     a total order; the cursor is the last request id scanned, and each range restarts just below it.
// A page so costs at most 257 seeks and VIEWS_SCAN_MAX fill reads. Ids made before ids carried their time
// (a data directory of before that change) have random bits there, and come in that (stable) order; the
// 40-bit time wraps in 2039 (ids.ts), after which the newest come last until the old ones are gone.
import assert from 'node:assert/strict';
import type { MarketOf } from '../contract/markets.js';
import type { Store } from '../store/db.js';
import { VIEWS_SCAN_MAX, type MakerFill, type SettledFilter } from '../contract/views.js';
import type { FillRecord } from '../records/fills.js';
import { cachedMarkets, legViews, matchesFilter, settledOutcome } from './positions-view.js';
import { MAX_SHARDS } from './ids.js';
import { makerFillIds, readFill } from './rfq-records.js';

/** The merge's sort key: newer sorts higher. Also the order of a cluster's merge of each node's page (http/owned-views.ts). */
export const fillOrder = (requestId: string) => requestId.slice(2) + requestId.slice(0, 2);
const orderOf = fillOrder;

export function makerFillsPage(
  store: Store,
  marketOf: MarketOf,
  makerAddress: string,
  page: { status: SettledFilter | undefined; limit: number; afterRequestId: string | null },
): { fills: MakerFill[]; next: string | null } {
  const markets = cachedMarkets(marketOf);
  const after = page.afterRequestId === null ? null : orderOf(page.afterRequestId);
  const heads: Array<{ id: string; order: string; rest: Iterator<string> }> = [];
  const fills: MakerFill[] = [];
  try {
    for (const shardByte of shardBytesOf(store, makerAddress)) {
      // Below the cursor in merge order: an id of this byte whose rest is below the cursor's, or equal with a
      // lower byte. The reverse range starts at the cursor's rest under this byte (inclusive) and skips it if so.
      const start = after === null ? `${shardByte}~` : `${shardByte}${after.slice(0, -2)}`;
      const rest = makerFillIds(store, makerAddress, { start, end: shardByte, reverse: true });
      const head = nextBelow(rest, after);
      if (head !== null) heads.push({ id: head.id, order: head.order, rest });
    }
    let lastListed: string | null = null;
    let lastScanned: string | null = null;
    for (let scanned = 0; heads.length > 0; scanned++) {
      if (scanned === VIEWS_SCAN_MAX) return { fills, next: fills.length === page.limit ? lastListed : lastScanned };
      let newest = 0;
      for (let i = 1; i < heads.length; i++) if (heads[i]!.order > heads[newest]!.order) newest = i;
      const head = heads[newest]!;
      lastScanned = head.id;
      const fill = readFill(store, makerAddress, head.id);
      assert.ok(fill !== undefined, `fill ${head.id} of ${makerAddress} vanished within one read snapshot`);
      if (matchesFilter(fill, page.status)) {
        // A full page has a next page only if a fill it would list follows (contract section 13).
        if (fills.length === page.limit) return { fills, next: lastListed };
        fills.push(makerFillView(fill, markets));
        lastListed = head.id;
      }
      const next = nextBelow(head.rest, after);
      if (next === null) heads.splice(newest, 1);
      else Object.assign(head, next);
    }
    return { fills, next: null };
  } finally {
    // Each open range holds an LMDB cursor until it is finished or returned.
    for (const head of heads) head.rest.return?.();
  }
}

/** The range's next id strictly below `after` in merge order, or null when it has none. */
function nextBelow(rest: Iterator<string>, after: string | null): { id: string; order: string } | null {
  for (let step = rest.next(); step.done !== true; step = rest.next()) {
    const id = step.value;
    const order = orderOf(id);
    // Only the range's first key can be at or above the cursor (it starts at the cursor's rest).
    if (after === null || order < after) return { id, order };
  }
  return null;
}

/** The distinct first two characters (the shard byte) of the maker's request ids: one seek each. */
function shardBytesOf(store: Store, makerAddress: string): string[] {
  const bytes: string[] = [];
  let from = '';
  for (let i = 0; i <= MAX_SHARDS; i++) {
    let id: string | null = null;
    for (const found of makerFillIds(store, makerAddress, { start: from, end: '~', limit: 1 })) id = found;
    if (id === null) return bytes;
    const shardByte = id.slice(0, 2);
    bytes.push(shardByte);
    // '~' sorts after every character of an id: the next id at or past it has another shard byte.
    from = `${shardByte}~`;
  }
  return assert.fail(`fills of ${makerAddress} name more than ${MAX_SHARDS} shard bytes`);
}

function makerFillView(fill: FillRecord, marketOf: MarketOf): MakerFill {
  const outcome = settledOutcome(fill, marketOf);
  const filled = BigInt(fill.filledWagerMicros);
  const liability = BigInt(fill.payoutMicros) - filled;
  return {
    request_id: fill.requestId,
    quote_id: fill.quoteId ?? null,
    taker: fill.taker,
    legs: legViews(fill.legs, marketOf),
    filled_wager_micros: fill.filledWagerMicros,
    odds: fill.oddsE4 / 10_000,
    payout_micros: fill.payoutMicros,
    liability_micros: liability.toString(),
    status: outcome === null ? 'open' : outcome === 'won' ? 'taker_won' : outcome === 'lost' ? 'taker_lost' : 'voided',
    // What the maker gained: the filled wager less what the taker was paid.
    maker_pnl_micros: fill.settledPaidMicros === null ? null : (filled - BigInt(fill.settledPaidMicros)).toString(),
    settled_at_ms: outcome === null ? null : (fill.settledAtMs ?? null),
  };
}
