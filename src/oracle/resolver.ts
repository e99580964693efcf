// Main thread. Resolves price windows from the oracle's prices (contract section 12), through the same
// Markets.resolve the admin route uses (resolvedBy 'oracle'), so the same listeners settle RFQ positions and
// contest picks.
//
// Flow: a committed batch of reports (intake.ts) names its assets; for each, the windows that end at or
// before the asset's newest report are final (decide.ts) and move from the in-memory index (window-index.ts)
// to a queue. The queue is worked in bounded steps, as contest settlement is (contests/settlement.ts): per
// event-loop turn at most RESOLVES_PER_TURN resolutions start (each reads two prices, one range read each,
// and commits one small transaction), and at most MAX_RESOLVES_IN_FLIGHT run at once (a resolution waits for
// its listeners, and a contest's settlement can take seconds), then setImmediate lets requests and socket
// frames in. 1,000 windows due at once take ~16 turns; each starts within a second of its deciding report
// (test/oracle/many-windows.test.ts).
//
// Crash: the deciding report is durable before the 200; the market resolves after it. A start rebuilds the
// index from LMDB (every OPEN price window, from the due index) and queues every window already final, so a
// crash between the two is finished at start; the listeners' own start-up checks finish a settlement a crash
// cut short after the resolution.
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { isApiError } from '../lib/errors.js';
import type { Markets } from '../markets/markets.js';
import type { Market } from '../contract/markets.js';
import { decideWindow, isWindowFinal, priceAt } from './decide.js';
import type { OraclePrices } from './prices.js';
import { WindowIndex, type IndexedWindow } from './window-index.js';

/** Resolutions started per event-loop turn: each is ~50-100 µs of main thread before its commit. */
export const RESOLVES_PER_TURN = 64;
/** Resolutions awaiting their commit and listeners at once; bounds memory and the write batch. */
export const MAX_RESOLVES_IN_FLIGHT = 256;

export interface ResolverOptions {
  maxStalenessMs: number;
  resolvesPerTurn?: number;
}

export class OracleResolver {
  private readonly index = new WindowIndex();
  /** Final windows waiting for their resolution, oldest end first within each evaluation. */
  private readonly queue: IndexedWindow[] = [];
  private inFlight = 0;
  private isPumpScheduled = false;
  private isStopped = false;
  private idleWaiters: (() => void)[] = [];
  private readonly resolvesPerTurn: number;

  constructor(
    private readonly markets: Markets,
    private readonly prices: OraclePrices,
    private readonly log: Logger,
    private readonly options: ResolverOptions,
  ) {
    this.resolvesPerTurn = options.resolvesPerTurn ?? RESOLVES_PER_TURN;
    markets.onPriceWindowCreated((market) => this.track(market));
    // A window resolved another way (admin, auto-void) leaves the index; cheap and synchronous.
    markets.onResolved((market) => {
      if (market.kind === 'price' && market.asset !== undefined) this.index.remove(market.market_id, market.asset);
    });
  }

  /** Windows indexed and not yet decided (metrics, tests). */
  get indexedCount(): number {
    return this.index.size;
  }

  /**
   * At start, before requests: indexes every unresolved price window (given by the due index, oldest first)
   * and queues every one that is already final.
   */
  start(openPriceWindows: Iterable<Market>): void {
    for (const market of openPriceWindows) this.addToIndex(market);
    let queued = 0;
    for (const asset of this.index.assets()) queued += this.evaluate(asset);
    this.log.info({ indexed: this.index.size, queued }, 'oracle windows indexed');
  }

  /** After a batch of reports committed: the windows of these assets that are final now get resolved. */
  onReportsStored(assets: Iterable<string>): void {
    for (const asset of assets) this.evaluate(asset);
  }

  /** Resolves once nothing is queued or resolving (tests, benchmarks, stop). */
  whenIdle(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops starting resolutions and waits for those running; the queue is left to the next start. */
  async stop(): Promise<void> {
    this.isStopped = true;
    this.queue.length = 0;
    await this.whenIdle();
  }

  /** A window created now (lookup): indexed, and resolved at once when its prices are already final. */
  private track(market: Market): void {
    if (market.status !== 'OPEN' || this.index.has(market.market_id)) return;
    this.addToIndex(market);
    if (market.asset !== undefined) this.evaluate(market.asset);
  }

  private addToIndex(market: Market): void {
    if (market.kind !== 'price' || market.status !== 'OPEN') return;
    const { asset, window_start_ms: startMs, window_end_ms: endMs } = market;
    if (asset === undefined || startMs === undefined || endMs === undefined) return;
    this.index.add({ marketId: market.market_id, asset, startMs, endMs });
  }

  /** Moves the asset's final windows to the queue; O(windows moved). Returns how many. */
  private evaluate(asset: string): number {
    if (this.isStopped) return 0;
    const latestTsMs = this.prices.latestReportTsMs(asset);
    if (latestTsMs === null) return 0;
    const final = this.index.takeEndingBy(asset, latestTsMs);
    if (final.length === 0) return 0;
    this.queue.push(...final);
    this.schedulePump();
    return final.length;
  }

  private schedulePump(): void {
    if (this.isPumpScheduled || this.isStopped) return;
    this.isPumpScheduled = true;
    setImmediate(() => {
      this.isPumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    let started = 0;
    while (started < this.resolvesPerTurn && this.inFlight < MAX_RESOLVES_IN_FLIGHT && this.queue.length > 0 && !this.isStopped) {
      const window = this.queue.shift()!;
      started++;
      this.inFlight++;
      void this.resolveWindow(window).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedulePump();
        else this.notifyIfIdle();
      });
    }
    if (this.queue.length > 0 && this.inFlight < MAX_RESOLVES_IN_FLIGHT) this.schedulePump();
    this.notifyIfIdle();
  }

  private notifyIfIdle(): void {
    if (this.queue.length > 0 || this.inFlight > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private async resolveWindow(window: IndexedWindow): Promise<void> {
    const market = this.markets.get(window.marketId);
    if (market === undefined || market.status !== 'OPEN') return;
    // Final (the asset's newest report is at or after the end), so these reads cannot change any more.
    const { maxStalenessMs } = this.options;
    const latestTsMs = this.prices.latestReportTsMs(window.asset);
    assert.ok(isWindowFinal(window.endMs, latestTsMs), `window ${window.marketId} queued before it was final`);
    const startPriceE8 = priceAt(this.prices.latestAtOrBefore(window.asset, window.startMs), window.startMs, maxStalenessMs);
    const endPriceE8 = priceAt(this.prices.latestAtOrBefore(window.asset, window.endMs), window.endMs, maxStalenessMs);
    const decision = decideWindow(startPriceE8, endPriceE8);
    try {
      await this.markets.resolve(window.marketId, decision.outcome, 'oracle', decision);
    } catch (err) {
      // Resolved another way meanwhile (an admin's other outcome, the auto-void): the first resolution stands.
      if (isApiError(err) && err.code === 'MARKET_ALREADY_RESOLVED') return;
      if (this.markets.get(window.marketId)?.status === 'OPEN') {
        // The resolution itself did not commit: back into the index, so the asset's next report retries it.
        this.addToIndex(market);
      }
      // Otherwise the resolution is durable and a listener failed (markets/resolution.ts): its own start-up
      // check or a same-outcome admin resolve finishes that work.
      this.log.error({ err, marketId: window.marketId }, 'oracle resolution of a price window failed');
      return;
    }
    this.log.debug({ marketId: window.marketId, outcome: decision.outcome }, 'price window resolved by the oracle');
  }
}
