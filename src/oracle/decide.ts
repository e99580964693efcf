// Pure. How a price window is decided from the oracle's reports (contract section 12).
//
// The price at a time T is the latest report with ts_ms <= T, if it is at most the staleness bound older than
// T; otherwise there is no price at T (stale or missing). A window [start, end) is decided once a report of
// its asset with ts_ms >= end has been accepted (then the price at start is final too, start < end): YES (up)
// if the end price is higher than the start price, NO (down) if lower, VOID if equal or if either is missing.

import type { ResolveOutcome } from '../contract/markets.js';

/** A stored report as the decision needs it. */
export interface ReportPoint {
  tsMs: number;
  priceE8: bigint;
}

export interface WindowDecision {
  outcome: ResolveOutcome;
  startPriceE8: bigint | null;
  endPriceE8: bigint | null;
}

/** The price at `atMs` from the latest report at or before it (null if none), or null when that is stale. */
export function priceAt(latestAtOrBefore: ReportPoint | null, atMs: number, maxStalenessMs: number): bigint | null {
  if (latestAtOrBefore === null) return null;
  if (latestAtOrBefore.tsMs > atMs) throw new RangeError('the report must be at or before the time it prices');
  return atMs - latestAtOrBefore.tsMs <= maxStalenessMs ? latestAtOrBefore.priceE8 : null;
}

/** A window is decidable once its asset has an accepted report at or after the window's end. */
export function isWindowFinal(windowEndMs: number, latestReportTsMs: number | null): boolean {
  return latestReportTsMs !== null && latestReportTsMs >= windowEndMs;
}

export function decideWindow(startPriceE8: bigint | null, endPriceE8: bigint | null): WindowDecision {
  if (startPriceE8 === null || endPriceE8 === null || startPriceE8 === endPriceE8) {
    return { outcome: 'VOID', startPriceE8, endPriceE8 };
  }
  return { outcome: endPriceE8 > startPriceE8 ? 'YES' : 'NO', startPriceE8, endPriceE8 };
}
