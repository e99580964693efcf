// Main thread (shard workers read markets directly from LMDB, market-table.ts). Markets: price windows created
// on first ask (price-windows.ts), mention markets created by an admin (mentions.ts), and resolution by the
// oracle, the admin resolve route or the auto-void sweep (resolution.ts), over the market records they share
// (market-table.ts). Ids come from a counter inside the creating transaction, so they are unique and stable
// across restarts.
//
// The one object the wiring builds and hands to every part that reads, creates or resolves markets (routes,
// RFQ admission and settlement, contests, the oracle, the dashboard): each needs a few methods from more than
// one of the parts below, and the parts share one MarketTable, so composing them here keeps those callers to
// one dependency and one construction. It decides nothing: each method is its part's.
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config/config.js';
import type { Store } from '../store/db.js';
import type { CreateMentionMarket, Market, ResolvedBy, ResolveOutcome } from '../contract/markets.js';
import { MarketTable, type MarketWrittenListener } from './market-table.js';
import { Mentions, type MentionPage } from './mentions.js';
import { PriceWindows, type WindowCreatedListener, type WindowPrices } from './price-windows.js';
import { Resolution, type ResolutionListener } from './resolution.js';

export class Markets {
  private readonly marketTable: MarketTable;
  private readonly windows: PriceWindows;
  private readonly mentions: Mentions;
  private readonly resolution: Resolution;

  constructor(store: Store, clock: Clock, config: Pick<Config, 'priceAssets' | 'priceDurationsSecs'>) {
    this.marketTable = new MarketTable(store);
    this.windows = new PriceWindows(store, clock, config, this.marketTable);
    this.mentions = new Mentions(store, this.marketTable);
    this.resolution = new Resolution(store, clock, this.marketTable);
  }

  get(marketId: number): Market | undefined {
    return this.marketTable.get(marketId);
  }

  /**
   * `listener` is told of every market record as it is written (a new market, a resolved one), inside the
   * writing transaction, so before anything that follows its commit: a cluster's gateway sends it to the
   * shard nodes ahead of the settlement of its positions.
   */
  onWritten(listener: MarketWrittenListener): void {
    this.marketTable.writtenListeners.push(listener);
  }

  // price-windows.ts
  priceMarketAt(asset: string, durationSecs: number, atMs: number): Promise<Market> {
    return this.windows.priceMarketAt(asset, durationSecs, atMs);
  }

  currentPriceMarket(asset: string, durationSecs: number): Promise<Market> {
    return this.windows.currentPriceMarket(asset, durationSecs);
  }

  onPriceWindowCreated(listener: WindowCreatedListener): void {
    this.windows.onPriceWindowCreated(listener);
  }

  // mentions.ts
  createMention(input: CreateMentionMarket): Promise<Market> {
    return this.mentions.createMention(input);
  }

  listMentions(status: Market['status'] | undefined, page: { limit: number; afterId: number | null }): MentionPage {
    return this.mentions.listMentions(status, page);
  }

  // resolution.ts; a `resolvedBy` left out is undefined there too, so it takes that default ('admin').
  resolve(marketId: number, outcome: ResolveOutcome, resolvedBy?: ResolvedBy, prices?: WindowPrices): Promise<Market> {
    return this.resolution.resolve(marketId, outcome, resolvedBy, prices);
  }

  onResolved(listener: ResolutionListener): void {
    this.resolution.onResolved(listener);
  }

  stopRetries(): void {
    this.resolution.stopRetries();
  }

  dueMarketIds(atMs: number, limit: number): number[] {
    return this.resolution.dueMarketIds(atMs, limit);
  }

  openPriceWindows(): Generator<Market> {
    return this.resolution.openPriceWindows();
  }

  duePage(nowMs: number, limit: number, afterKey: string | null): { markets: Market[]; nextKey: string | null } {
    return this.resolution.duePage(nowMs, limit, afterKey);
  }
}
