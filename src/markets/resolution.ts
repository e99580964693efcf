// Main thread. Resolution (contract sections 5 and 12): the one way a market resolves, by the oracle, the admin
// resolve route or the auto-void sweep; the listeners told of each resolution (RFQ settlement, contests); and
// the lists of what is still to resolve, read from the due index (due-index.ts).
import assert from 'node:assert/strict';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import { crashOnBrokenInvariant } from '../lib/fatal.js';
import { isOverloaded, OverloadRetries } from '../lib/overload-retries.js';
import type { Store } from '../store/db.js';
import type { Market, ResolvedBy, ResolveOutcome } from '../contract/markets.js';
import { allDueKeys, dueKeysUpTo, marketIdOfDueKey } from './due-index.js';
import type { MarketTable } from './market-table.js';
import type { WindowPrices } from './price-windows.js';
import { table } from '../store/records.js';

export type ResolutionListener = (market: Market) => void | Promise<void>;

export class Resolution {
  private readonly listeners: ResolutionListener[] = [];
  /** Resolutions whose listeners failed for want of room, re-run in the background, by market id. */
  private readonly retries = new OverloadRetries<number>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly marketTable: MarketTable,
  ) {}

  private get dueIndex() {
    return table(this.store, 'marketsDue');
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
      const market = this.marketTable.get(marketId);
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
      this.marketTable.putResolvedInTxn(marketId, market, next);
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
        // A broken money invariant is a bug, not a failure to retry: the process stops, and nothing more runs.
        if (crashOnBrokenInvariant(err)) throw err;
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
      const market = this.marketTable.get(marketIdOfDueKey(key));
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
      const market = this.marketTable.get(marketIdOfDueKey(key));
      assert.ok(market !== undefined && market.status === 'OPEN', `due index names market ${key} that is not open`);
      return market;
    });
    const hasMore = keys.length > limit;
    return { markets, nextKey: hasMore ? pageKeys.at(-1)! : null };
  }
}
