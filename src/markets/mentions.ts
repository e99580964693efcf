// Main thread. Mention markets: created by an admin, listed a page at a time by anyone (GET
// /v1/mention-markets), through the `mentionMarkets` index of their ids.
import assert from 'node:assert/strict';
import { nextCounterInTxn } from '../store/counters.js';
import type { Store } from '../store/db.js';
import type { CreateMentionMarket, Market } from '../contract/markets.js';
import { marketKey } from '../records/markets.js';
import { withOracleFields } from './due-index.js';
import type { MarketTable } from './market-table.js';
import { table } from '../store/records.js';

/**
 * Mention market records one page of GET /v1/mention-markets reads at most (a filtered page walks past
 * records of other statuses). ~1 µs a cached record: about 1 ms of main thread at worst, on a route anyone
 * may call. It is also the largest `limit` list() accepts (the route allows 100).
 */
export const MENTION_SCAN_MAX = 1000;

export interface MentionPage {
  markets: Market[];
  /** The id the next page starts after, or null on the last page. */
  nextId: number | null;
}

export class Mentions {
  constructor(
    private readonly store: Store,
    private readonly marketTable: MarketTable,
  ) {}

  createMention(input: CreateMentionMarket): Promise<Market> {
    return this.store.transact(() => {
      const market: Market = {
        market_id: nextCounterInTxn(this.store, 'market'),
        kind: 'mention',
        name: input.name,
        description: input.description ?? null,
        status: 'OPEN',
        outcome: null,
        source_kind: input.source_kind,
        source_event_id: input.source_event_id,
        source_market_id: input.source_market_id,
        betting_closes_at_ms: input.betting_closes_at_ms,
        live_ends_at_ms: input.live_ends_at_ms ?? null,
        resolution_time_ms: input.resolution_time_ms ?? null,
        resolved_by: null,
        start_price_e8: null,
        end_price_e8: null,
      };
      this.marketTable.putNewInTxn(market);
      void table(this.store, 'mentionMarkets').put(marketKey(market.market_id), true);
      return market;
    });
  }

  /**
   * One page of the mention markets, in market id order, strictly after `afterId` (the previous page's
   * nextId; null: from the first), optionally of one status. Ids are fixed at creation and new ones are
   * larger, so walking every page while markets are created repeats nothing and skips nothing.
   *
   * Cost bound: a page reads at most MENTION_SCAN_MAX records, whatever the number of mention markets (they
   * are never deleted, and the route needs no token). Unfiltered that is `limit` reads (a key past the page says
   * another follows). A status filter has no index of its own, so a page walks records until
   * it has `limit` matches and has seen whether one more follows; when the scan bound comes first the page
   * is shorter than `limit` (possibly empty) and `nextId` says where the walk goes on: a client follows
   * next_cursor until null, as always (docs/performance.md "Public lists").
   */
  listMentions(status: Market['status'] | undefined, page: { limit: number; afterId: number | null }): MentionPage {
    assert.ok(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= MENTION_SCAN_MAX, `mention list limit ${page.limit}`);
    const markets: Market[] = [];
    let lastListedId: number | null = null;
    let lastScannedId: number | null = null;
    let scanned = 0;
    const start = page.afterId === null ? undefined : marketKey(page.afterId + 1);
    for (const { key } of table(this.store, 'mentionMarkets').getRange(start === undefined ? {} : { start })) {
      if (scanned === MENTION_SCAN_MAX) {
        // Out of budget: a full page may have more after it; a short one goes on from the last record read.
        return { markets, nextId: markets.length === page.limit ? lastListedId : lastScannedId };
      }
      // Unfiltered, any key past a full page is a match: no need to read its record.
      if (status === undefined && markets.length === page.limit) return { markets, nextId: lastListedId };
      scanned++;
      const stored = this.marketTable.getStoredByKey(key);
      assert.ok(stored !== undefined && stored.kind === 'mention', `mention index key ${key} has no mention market`);
      const market = withOracleFields(stored);
      lastScannedId = market.market_id;
      if (status !== undefined && market.status !== status) continue;
      // A match past a full page: another page follows.
      if (markets.length === page.limit) return { markets, nextId: lastListedId };
      markets.push(market);
      lastListedId = market.market_id;
    }
    return { markets, nextId: null };
  }
}
