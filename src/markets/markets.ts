// Main thread (shard workers read markets directly from LMDB). Markets: price windows created on first ask,
// mention markets created by an admin, and resolution by the oracle (the admin resolve route). Ids come from
// a counter inside the creating transaction, so they are unique and stable across restarts.
//
// Status stays OPEN until resolution; betting closes at betting_closes_at_ms (the window end for price
// markets). `isOpenForBetting` is the one test every part (RFQ legs, contest picks) applies.
//
// A price window is created on lookup only within the reach set in windows.ts (7 days ahead, 1 day behind, in
// windows at most 2016 and 288): an unauthenticated caller cannot create unbounded durable markets, nor one
// whose times are not dates. Every market's times are asserted to be safe integers and dates before it is written.
import assert, { AssertionError } from 'node:assert/strict';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import { ApiError, errors } from '../lib/errors.js';
import { isOverloaded, OverloadRetries } from '../lib/overload-retries.js';
import { nextCounterInTxn } from '../store/counters.js';
import type { Store } from '../store/db.js';
import {
  MAX_DATE_MS,
  type CreateMentionMarket,
  type Market,
  type ResolvedBy,
  type ResolveOutcome,
  type StoredMarket,
} from '../contract/markets.js';
import { marketKey } from '../records/markets.js';
import { allDueKeys, dueAtMsOf, dueKey, dueKeysUpTo, marketIdOfDueKey, withOracleFields } from './due-index.js';
import { windowContaining, windowKey, windowReach, windowsAhead, windowsBehindCreated } from './windows.js';
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

export type ResolutionListener = (market: Market) => void | Promise<void>;
/** Told of each price window after the transaction creating it committed (the oracle indexes it). */
export type WindowCreatedListener = (market: Market) => void;

/** The two prices a window was decided on (oracle/decide.ts); null when missing or stale. */
export interface WindowPrices {
  startPriceE8: bigint | null;
  endPriceE8: bigint | null;
}

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

export class Markets {
  private readonly listeners: ResolutionListener[] = [];
  private readonly windowListeners: WindowCreatedListener[] = [];
  /** Resolutions whose listeners failed for want of room, re-run in the background, by market id. */
  private readonly retries = new OverloadRetries<number>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Pick<Config, 'priceAssets' | 'priceDurationsSecs'>,
  ) {}

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

  /** `put` of a new market: the record and its entry in the due index (due-index.ts), in the caller's transaction. */
  private putNewInTxn(market: Market): void {
    assertMarketTimes(market);
    assert.equal(market.status, 'OPEN');
    void this.markets.put(marketKey(market.market_id), market);
    void this.dueIndex.put(dueKey(dueAtMsOf(market), market.market_id), true);
  }

  /**
   * The price market of the window containing `atMs` (the lookup's at_ms), created (durably) on first ask
   * when the window is in reach (windows.ts). Past the reach ahead: 400 VALIDATION_FAILED on /at_ms, since no
   * market can exist there. Further back than the creating reach: found if it exists, else 404.
   */
  async priceMarketAt(asset: string, durationSecs: number, atMs: number): Promise<Market> {
    if (!this.config.priceAssets.includes(asset) || !this.config.priceDurationsSecs.includes(durationSecs)) {
      throw errors.noPriceMarket(asset, durationSecs);
    }
    const reach = windowReach(atMs, this.clock.nowMs(), durationSecs);
    if (reach === 'too-far-ahead') {
      throw errors.priceWindowTooFarAhead(windowsAhead(durationSecs));
    }
    const window = windowContaining(atMs, durationSecs);
    const key = windowKey(asset, durationSecs, window.startMs);
    const existing = this.findWindow(key);
    if (existing !== undefined) return existing;
    if (reach === 'find-only') {
      throw errors.priceWindowTooFarBack(windowsBehindCreated(durationSecs));
    }
    const created = await this.store.transact(() => {
      const raced = this.findWindow(key);
      if (raced !== undefined) return raced;
      const market: Market = {
        market_id: nextCounterInTxn(this.store, 'market'),
        kind: 'price',
        name: `${asset} up or down, ${durationSecs}s from ${new Date(window.startMs).toISOString()}`,
        description: `Resolves YES (up) if ${asset} closes the window above its open, NO (down) otherwise.`,
        status: 'OPEN',
        outcome: null,
        asset,
        duration_secs: durationSecs,
        window_start_ms: window.startMs,
        window_end_ms: window.endMs,
        source_kind: null,
        source_event_id: null,
        source_market_id: null,
        betting_closes_at_ms: window.endMs,
        live_ends_at_ms: window.endMs,
        resolution_time_ms: window.endMs,
        resolved_by: null,
        start_price_e8: null,
        end_price_e8: null,
      };
      this.putNewInTxn(market);
      void table(this.store, 'marketWindows').put(key, market.market_id);
      return market;
    });
    // After the commit, and also for a window a concurrent lookup created (the listeners are idempotent):
    // the oracle resolves a window created after its prices were final at once (oracle/resolver.ts).
    for (const listener of this.windowListeners) listener(created);
    return created;
  }

  currentPriceMarket(asset: string, durationSecs: number): Promise<Market> {
    return this.priceMarketAt(asset, durationSecs, this.clock.nowMs());
  }

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
      this.putNewInTxn(market);
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
      const stored = this.markets.get(key);
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

  /**
   * The one way a market resolves, whoever decides (contract sections 5 and 12): the admin route
   * (`resolvedBy` 'admin'), the oracle's price windows ('oracle', with the two prices it decided on) and the
   * auto-void sweep ('auto_void'), so the same listeners settle every kind. Final: resolving again with the
   * same outcome answers the market unchanged (its resolved_by and prices stay those of the first
   * resolution); with another outcome it is 409 MARKET_ALREADY_RESOLVED. The listeners (RFQ settlement,
   * contests) run after the durable write, on the first resolve and again on every same-outcome retry, so
   * each must be idempotent (running twice on one resolved market changes nothing the second time). A
   * listener that throws leaves the resolution durable and its own work undone: the resolve then fails (500
   * INTERNAL, logged with the request id), and the operator's natural reaction, retrying the same resolve,
   * re-runs the listeners and finishes that work at once instead of at the next start (which re-checks
   * resolved markets for a crash in between). `resolvedBy` defaults to 'admin', the route's (and the tests')
   * manual resolve; the oracle and the sweep always pass theirs.
   */
  async resolve(marketId: number, outcome: ResolveOutcome, resolvedBy: ResolvedBy = 'admin', prices?: WindowPrices): Promise<Market> {
    const resolved = await this.store.transact(() => {
      const market = this.get(marketId);
      if (market === undefined) throw new ApiError('MARKET_NOT_FOUND');
      if (market.status !== 'OPEN') {
        const sameOutcome = outcome === 'VOID' ? market.status === 'VOIDED' : market.outcome === outcome;
        if (!sameOutcome) throw new ApiError('MARKET_ALREADY_RESOLVED');
        return market;
      }
      const next: Market = {
        ...market,
        status: outcome === 'VOID' ? 'VOIDED' : 'RESOLVED',
        outcome: outcome === 'VOID' ? null : outcome,
        resolution_time_ms: this.clock.nowMs(),
        resolved_by: resolvedBy,
        start_price_e8: prices?.startPriceE8 == null ? null : String(prices.startPriceE8),
        end_price_e8: prices?.endPriceE8 == null ? null : String(prices.endPriceE8),
      };
      void this.markets.put(marketKey(marketId), next);
      // Keyed by the due time of the record as it was: resolution rewrites resolution_time_ms.
      const removed = this.dueIndex.removeSync(dueKey(dueAtMsOf(market), marketId));
      assert.ok(removed, `open market ${marketId} was missing from the due index`);
      return next;
    });
    // Re-run on every same-outcome resolve, not only while something is left unsettled: what a listener
    // still has to do is exactly what it looks up first (settlement: this market's entries in the
    // open-position index, which settling removes; contests: its in-memory index of open contests by market),
    // so a retry of a market whose work is done costs one empty range read and one map lookup. A separate
    // "anything left?" check would duplicate those indexes and could disagree with them.
    await this.runListeners(resolved);
    return resolved;
  }

  /**
   * Runs every listener, each one even when one before it threw: RFQ settlement and contest resolution are
   * independent, and one's failure must not keep the other's money reserved until a retry or a restart. A
   * broken invariant (AssertionError) is the exception: it stops the process, and nothing runs after it.
   * Then throws if any failed, with every failure. Not an ApiError, on purpose: the HTTP layer answers it
   * 500 INTERNAL and logs it with the request id (contract section 2: an unexpected failure), whereas a
   * listener's own ApiError (a 503 "nothing was accepted", say) would misstate a durable resolution.
   */
  private async runListeners(market: Market): Promise<void> {
    const failures: unknown[] = [];
    for (const listener of this.listeners) {
      try {
        await listener(market);
      } catch (err) {
        // A broken money invariant is a bug, not a failure to retry: stop the process rather than carry on
        // with wrong balances (STYLE), as contests do.
        if (err instanceof AssertionError) {
          setImmediate(() => {
            throw err;
          });
          throw err;
        }
        failures.push(err);
      }
    }
    if (failures.length === 0) return;
    // A settlement refused for want of room (503 from a full store, here or in a shard) is work already
    // accepted: it is re-run by itself once there is room, without waiting for a resolve call.
    // The listeners are idempotent (see resolve). A failure of another kind ends the loop: the AggregateError
    // thrown below was logged with each listener's error, and the next same-outcome resolve or start re-runs them.
    if (failures.every(isOverloaded))
      this.retries.retry(
        market.market_id,
        () => this.runListeners(market),
        () => undefined,
      );
    // An AggregateError: the log (pino) shows each listener's error with its stack.
    throw new AggregateError(
      failures,
      `market ${market.market_id} is resolved (durable), but ${failures.length} of its resolution listeners failed; ` +
        'resolving it again with the same outcome re-runs them',
    );
  }

  /** At stop, before the store closes: no background re-run starts any more. */
  stopRetries(): void {
    this.retries.stop();
  }

  onResolved(listener: ResolutionListener): void {
    this.listeners.push(listener);
  }

  onPriceWindowCreated(listener: WindowCreatedListener): void {
    this.windowListeners.push(listener);
  }

  /**
   * Ids of the markets due at or before `atMs` and unresolved, oldest first, at most `limit` (the auto-void
   * sweep): one range read of the due index.
   */
  dueMarketIds(atMs: number, limit: number): number[] {
    return dueKeysUpTo(this.dueIndex, atMs, null, limit).map(marketIdOfDueKey);
  }

  /** Every unresolved price window, oldest due first (the oracle's index at start): due index, then records. */
  *openPriceWindows(): Generator<Market> {
    for (const key of allDueKeys(this.dueIndex)) {
      const market = this.get(marketIdOfDueKey(key));
      if (market !== undefined && market.kind === 'price') yield market;
    }
  }

  /**
   * A page of the markets due at or before `nowMs` and unresolved, oldest first (GET
   * /v1/admin/markets?due=true): one range read of the due index from the cursor, then one record per market.
   */
  duePage(nowMs: number, limit: number, afterKey: string | null): { markets: Market[]; nextKey: string | null } {
    const keys = dueKeysUpTo(this.dueIndex, nowMs, afterKey, limit + 1);
    const pageKeys = keys.slice(0, limit);
    const markets = pageKeys.map((key) => {
      const market = this.get(marketIdOfDueKey(key));
      assert.ok(market !== undefined && market.status === 'OPEN', `due index names market ${key} that is not open`);
      return market;
    });
    const hasMore = keys.length > limit;
    return { markets, nextKey: hasMore ? pageKeys.at(-1)! : null };
  }

  private findWindow(key: string): Market | undefined {
    const marketId = table(this.store, 'marketWindows').get(key);
    return marketId === undefined ? undefined : this.get(marketId);
  }
}
