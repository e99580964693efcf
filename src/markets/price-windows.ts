// Main thread. Price markets: the market of an (asset, duration) window, created on first ask.
//
// A price window is created on lookup only within the reach set in windows.ts (7 days ahead, 1 day behind, in
// windows at most 2016 and 288): an unauthenticated caller cannot create unbounded durable markets, nor one
// whose times are not dates.
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import { errors } from '../lib/errors.js';
import { nextCounterInTxn } from '../store/counters.js';
import type { Store } from '../store/db.js';
import type { Market } from '../contract/markets.js';
import type { MarketTable } from './market-table.js';
import { windowContaining, windowKey, windowReach, windowsAhead, windowsBehindCreated } from './windows.js';
import { table } from '../store/records.js';

/** Told of each price window after the transaction creating it committed (the oracle indexes it). */
export type WindowCreatedListener = (market: Market) => void;

/** The two prices a window was decided on (oracle/decide.ts); null when missing or stale. */
export interface WindowPrices {
  startPriceE8: bigint | null;
  endPriceE8: bigint | null;
}

export class PriceWindows {
  private readonly windowListeners: WindowCreatedListener[] = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: Pick<Config, 'priceAssets' | 'priceDurationsSecs'>,
    private readonly marketTable: MarketTable,
  ) {}

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
      this.marketTable.putNewInTxn(market);
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

  onPriceWindowCreated(listener: WindowCreatedListener): void {
    this.windowListeners.push(listener);
  }

  private findWindow(key: string): Market | undefined {
    const marketId = table(this.store, 'marketWindows').get(key);
    return marketId === undefined ? undefined : this.marketTable.get(marketId);
  }
}
