// Main thread. The oracle's price reports (contract section 12), durable in LMDB database `oraclePrices`:
// key `${asset}:${ts_ms, 16 digits}` -> PriceReportRecord. Within an asset keys sort by ts_ms, so "the latest
// report with ts_ms <= T" is one reverse range read from T, and "any report with ts_ms >= T" one forward
// range read from T (and the newest report of an asset one reverse read from its end).
//
// Reports of an asset are append-only in ts_ms: a report older than the asset's latest accepted one is
// refused ORACLE_OUT_OF_ORDER. Why: once a report at or after T is accepted, the price at T is final
// (contract section 12); a later report with an earlier ts_ms would become "the latest report <= T" for the
// times between the two and change prices that are final, so a window decided before a crash could be
// decided differently after it. Refusing them makes every final price a fixed function of what is stored.
// Same (asset, ts_ms) with the same price is a duplicate (idempotent); with another price ORACLE_CONFLICT.
//
// Disk: only configured oracle signers (or the admin) can write, at most 1,000 reports a request. Nothing
// prunes old reports yet: at one report a second per asset that is ~60 bytes × 86,400 × 3 ≈ 16 MB a day
// (docs/oracle.md).
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';
import type { ReportPoint } from './decide.js';
import { table } from '../store/records.js';

/** A report that passed its checks and signature, to be stored; `index` is its place in the request. */
export interface ReportToStore {
  index: number;
  asset: string;
  tsMs: number;
  priceE8: bigint;
  source: string;
}

export type StoreOutcome = 'accepted' | 'duplicate' | 'ORACLE_CONFLICT' | 'ORACLE_OUT_OF_ORDER';

const TS_DIGITS = 16; // MAX_DATE_MS (8.64e15) has 16 digits

export function priceKey(asset: string, tsMs: number): string {
  return `${asset}:${String(tsMs).padStart(TS_DIGITS, '0')}`;
}

function tsOfKey(key: string): number {
  return Number(key.slice(key.length - TS_DIGITS));
}

export class OraclePrices {
  /** Newest accepted ts_ms per asset, mirrored after each commit; read from LMDB at construction. */
  private readonly latestTsMs = new Map<string, number>();

  constructor(
    private readonly store: Store,
    assets: readonly string[],
  ) {
    for (const asset of assets) {
      const latest = this.latestStoredTsMs(asset);
      if (latest !== null) this.latestTsMs.set(asset, latest);
    }
  }

  private get reports() {
    return table(this.store, 'oraclePrices');
  }

  /** The newest accepted report's ts_ms of an asset (what decides which windows are final), or null. */
  latestReportTsMs(asset: string): number | null {
    return this.latestTsMs.get(asset) ?? null;
  }

  /** The latest report with ts_ms <= atMs: one reverse range read. */
  latestAtOrBefore(asset: string, atMs: number): ReportPoint | null {
    for (const { key, value } of this.reports.getRange({ start: priceKey(asset, atMs), end: `${asset}:`, reverse: true, limit: 1 })) {
      return { tsMs: tsOfKey(key), priceE8: BigInt(value.priceE8) };
    }
    return null;
  }

  /** Whether any report with ts_ms >= atMs is stored: one forward range read. */
  hasReportAtOrAfter(asset: string, atMs: number): boolean {
    for (const _ of this.reports.getKeys({ start: priceKey(asset, atMs), end: `${asset};`, limit: 1 })) return true;
    return false;
  }

  /**
   * Stores a request's reports in one transaction, each judged against what is stored and the reports before
   * it in (asset, ts_ms) order, so a batch's order does not matter; among reports of the same (asset, ts_ms)
   * the earlier in the request comes first. Resolves with each report's outcome, by its place in `reports`.
   */
  async storeBatch(reports: readonly ReportToStore[], nowMs: number): Promise<StoreOutcome[]> {
    const order = reports.map((_, i) => i).sort((a, b) => compareReports(reports[a]!, reports[b]!));
    const outcomes = new Array<StoreOutcome>(reports.length);
    const latestInTxn = await this.store.transact(() => {
      // Read inside the transaction, not from the in-memory mirror: another request's batch may have
      // committed in this same write batch before the mirror caught up.
      const latest = new Map<string, number | null>();
      for (const i of order) {
        const report = reports[i]!;
        if (!latest.has(report.asset)) latest.set(report.asset, this.latestStoredTsMs(report.asset));
        const key = priceKey(report.asset, report.tsMs);
        const existing = this.reports.get(key);
        if (existing !== undefined) {
          outcomes[i] = existing.priceE8 === String(report.priceE8) ? 'duplicate' : 'ORACLE_CONFLICT';
          continue;
        }
        const latestTsMs = latest.get(report.asset) ?? null;
        if (latestTsMs !== null && report.tsMs < latestTsMs) {
          outcomes[i] = 'ORACLE_OUT_OF_ORDER';
          continue;
        }
        void this.reports.put(key, { priceE8: String(report.priceE8), source: report.source, receivedAtMs: nowMs });
        latest.set(report.asset, report.tsMs);
        outcomes[i] = 'accepted';
      }
      return latest;
    });
    for (const [asset, tsMs] of latestInTxn) {
      if (tsMs !== null && tsMs > (this.latestTsMs.get(asset) ?? -1)) this.latestTsMs.set(asset, tsMs);
    }
    assert.ok(
      outcomes.every((o) => o !== undefined),
      'every report has an outcome',
    );
    return outcomes;
  }

  private latestStoredTsMs(asset: string): number | null {
    for (const key of this.reports.getKeys({ start: `${asset};`, end: `${asset}:`, reverse: true, limit: 1 })) return tsOfKey(key);
    return null;
  }
}

function compareReports(a: ReportToStore, b: ReportToStore): number {
  if (a.asset !== b.asset) return a.asset < b.asset ? -1 : 1;
  if (a.tsMs !== b.tsMs) return a.tsMs - b.tsMs;
  return a.index - b.index;
}
