// Main thread, owned by the resolver (resolver.ts). The unresolved price windows of each asset, in memory,
// sorted by end time: a report of an asset can decide exactly the windows that end at or before its ts_ms,
// which are a prefix of that asset's list, so evaluating a report never scans every market. Rebuilt at
// start from LMDB's due index (markets/due-index.ts) and fed by each window's creation.
//
// Bound: a window exists only within the lookup's reach (markets/windows.ts: 9,801 markets at once with the
// default assets and durations) and leaves this index when it is decided or voided after the grace, so the
// index holds at most the windows of about reach + grace: ~10,000-20,000 entries of ~100 bytes.

export interface IndexedWindow {
  marketId: number;
  asset: string;
  startMs: number;
  endMs: number;
}

export class WindowIndex {
  /** Per asset, sorted by (endMs, marketId). */
  private readonly byAsset = new Map<string, IndexedWindow[]>();
  private readonly marketIds = new Set<number>();

  get size(): number {
    return this.marketIds.size;
  }

  has(marketId: number): boolean {
    return this.marketIds.has(marketId);
  }

  /** Adds a window (a no-op when it is already in). O(log n) search and an O(n) insert into one asset's list. */
  add(window: IndexedWindow): void {
    if (this.marketIds.has(window.marketId)) return;
    let list = this.byAsset.get(window.asset);
    if (list === undefined) this.byAsset.set(window.asset, (list = []));
    let low = 0;
    let high = list.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const other = list[mid]!;
      if (other.endMs < window.endMs || (other.endMs === window.endMs && other.marketId < window.marketId)) low = mid + 1;
      else high = mid;
    }
    list.splice(low, 0, window);
    this.marketIds.add(window.marketId);
  }

  /** Removes and returns the asset's windows that end at or before `atMs`, oldest first. */
  takeEndingBy(asset: string, atMs: number): IndexedWindow[] {
    const list = this.byAsset.get(asset);
    if (list === undefined) return [];
    let count = 0;
    while (count < list.length && list[count]!.endMs <= atMs) count++;
    const taken = list.splice(0, count);
    for (const window of taken) this.marketIds.delete(window.marketId);
    return taken;
  }

  /** Removes one window (resolved some other way: an admin resolve, the auto-void). O(n) in its asset's list. */
  remove(marketId: number, asset: string): void {
    if (!this.marketIds.delete(marketId)) return;
    const list = this.byAsset.get(asset);
    const at = list?.findIndex((window) => window.marketId === marketId) ?? -1;
    if (at >= 0) list!.splice(at, 1);
  }

  assets(): string[] {
    return [...this.byAsset.keys()];
  }
}
