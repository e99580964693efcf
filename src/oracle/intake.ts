// Main thread. A request's price reports (contract section 12), signed or the admin's unsigned ones: each
// report is judged alone, and a bad one is refused with its index and code and changes nothing else in its
// batch. Checks that cost nothing come first (asset, time, signature encoding), then one recovery per
// remaining signed report on the verify pool (all of a request's in one turn, so the pool sends them as one
// task per thread), then one LMDB transaction for the batch (prices.ts), then the resolver hears which
// assets moved (resolver.ts).
//
// Overload: the pool refusing any recovery of a request answers 503 OVERLOADED and stores none of its
// reports (contract section 2: nothing was accepted). The route is open to anyone (its trust is the
// signature), so it also has its own bound on recoveries in flight, MAX_RECOVERIES_IN_FLIGHT: a flood of
// well-formed but unsigned-by-us reports gets 503 once it holds that many, and cannot take the whole pool
// queue that logins, maker handshakes and signed RFQs share.
import assert from 'node:assert/strict';
import { isPoolOverloaded, type VerifyPool } from '../crypto/verify-pool.js';
import { parseSignatureBase64 } from '../crypto/signature.js';
import type { Clock } from '../lib/clock.js';
import { overloaded } from '../lib/errors.js';
import type { PriceReportsAnswer, ReportRejectionCode, SignedPriceReport, UnsignedPriceReport } from '../contract/oracle.js';
import type { OraclePrices, ReportToStore } from './prices.js';
import type { OracleResolver } from './resolver.js';
import { ORACLE_ASSET_BYTES, oracleReportBytes } from './signing.js';

/** How far ahead of the service's clock a report's ts_ms may be: clock skew between oracle and service. */
export const MAX_REPORT_AHEAD_MS = 5_000;
/**
 * Recoveries of this route not yet answered, service-wide: 2,000 is ~5 full requests, ~0.2 s of one verify
 * thread (~100 µs each, docs/performance.md); the pool's own bound (PARLAYD_VERIFY_MAX_QUEUE, 10,000) stays
 * free for the other routes.
 */
export const MAX_RECOVERIES_IN_FLIGHT = 2_000;

export interface IntakeConfig {
  priceAssets: readonly string[];
  oracleAddresses: readonly string[];
}

type Verdict = { code: ReportRejectionCode } | { report: ReportToStore };

export class OracleIntake {
  private readonly assets: ReadonlySet<string>;
  private readonly signers: ReadonlySet<string>;
  private recoveriesInFlight = 0;

  constructor(
    private readonly prices: OraclePrices,
    private readonly resolver: OracleResolver,
    private readonly verifyPool: Pick<VerifyPool, 'recoverPersonalSigner'>,
    private readonly clock: Clock,
    config: IntakeConfig,
  ) {
    this.assets = new Set(config.priceAssets);
    this.signers = new Set(config.oracleAddresses);
  }

  /** POST /v1/oracle/prices. */
  async submitSigned(reports: readonly SignedPriceReport[]): Promise<PriceReportsAnswer> {
    const nowMs = this.clock.nowMs();
    const verdicts: (Verdict | null)[] = reports.map((r) => this.precheck(r, nowMs, true));
    const toRecover: { index: number; bytes: Uint8Array; sig65: Uint8Array }[] = [];
    reports.forEach((r, index) => {
      if (verdicts[index] !== null) return;
      const sig65 = parseSignatureBase64(r.signature);
      if (sig65 === null) verdicts[index] = { code: 'INVALID_SIGNATURE' };
      // No signer configured: nothing a signature says can make the report acceptable, so recover nothing.
      else if (this.signers.size === 0) verdicts[index] = { code: 'ORACLE_SIGNER_UNKNOWN' };
      else toRecover.push({ index, bytes: oracleReportBytes({ asset: r.asset, tsMs: r.ts_ms, priceE8: r.price_e8 }), sig65 });
    });
    if (this.recoveriesInFlight + toRecover.length > MAX_RECOVERIES_IN_FLIGHT) throw overloaded();
    this.recoveriesInFlight += toRecover.length;
    let recovered;
    try {
      recovered = await Promise.allSettled(
        toRecover.map((item) => this.verifyPool.recoverPersonalSigner(item.bytes, item.sig65, 'oracle')),
      );
    } finally {
      this.recoveriesInFlight -= toRecover.length;
    }
    // Any refusal by the pool: nothing of this request is stored (the answered recoveries are dropped).
    const failure = recovered.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure !== undefined) {
      if (isPoolOverloaded(failure.reason)) throw overloaded();
      throw failure.reason;
    }
    recovered.forEach((result, i) => {
      const { index } = toRecover[i]!;
      const answer = (result as PromiseFulfilledResult<Awaited<ReturnType<VerifyPool['recoverPersonalSigner']>>>).value;
      if (!answer.ok) verdicts[index] = { code: 'INVALID_SIGNATURE' };
      else if (!this.signers.has(answer.address)) verdicts[index] = { code: 'ORACLE_SIGNER_UNKNOWN' };
      else verdicts[index] = { report: toStore(reports[index]!, index, answer.address) };
    });
    return this.storeAndAnswer(verdicts, nowMs);
  }

  /** POST /v1/admin/oracle/prices: the same rules without a signature (the admin bearer is the trust). */
  submitUnsigned(reports: readonly UnsignedPriceReport[]): Promise<PriceReportsAnswer> {
    const nowMs = this.clock.nowMs();
    const verdicts = reports.map((r, index) => this.precheck(r, nowMs, false) ?? { report: toStore(r, index, 'admin') });
    return this.storeAndAnswer(verdicts, nowMs);
  }

  /** The checks that need no signature; null when the report passes them. */
  private precheck(report: UnsignedPriceReport, nowMs: number, isSigned: boolean): Verdict | null {
    // contract section 2: no market for that asset.
    if (!this.assets.has(report.asset)) return { code: 'MARKET_NOT_FOUND' };
    // The signed bytes carry 8 bytes of symbol; a longer configured asset can only be reported by the admin.
    if (isSigned && report.asset.length > ORACLE_ASSET_BYTES) return { code: 'VALIDATION_FAILED' };
    // A report far ahead would make every window up to it final at once, with stale prices: VOID for all.
    if (report.ts_ms > nowMs + MAX_REPORT_AHEAD_MS) return { code: 'VALIDATION_FAILED' };
    return null;
  }

  private async storeAndAnswer(verdicts: readonly (Verdict | null)[], nowMs: number): Promise<PriceReportsAnswer> {
    const toStoreList: ReportToStore[] = [];
    const rejected: { index: number; code: ReportRejectionCode }[] = [];
    verdicts.forEach((verdict, index) => {
      assert.ok(verdict !== null, `report ${index} was never judged`);
      if ('code' in verdict) rejected.push({ index, code: verdict.code });
      else toStoreList.push(verdict.report);
    });
    let accepted = 0;
    let duplicates = 0;
    const movedAssets = new Set<string>();
    if (toStoreList.length > 0) {
      const outcomes = await this.prices.storeBatch(toStoreList, nowMs);
      outcomes.forEach((outcome, i) => {
        const report = toStoreList[i]!;
        if (outcome === 'accepted') {
          accepted++;
          movedAssets.add(report.asset);
        } else if (outcome === 'duplicate') duplicates++;
        else rejected.push({ index: report.index, code: outcome });
      });
    }
    rejected.sort((a, b) => a.index - b.index);
    // After the commit: the reports are durable before any window is decided on them.
    this.resolver.onReportsStored(movedAssets);
    return { accepted, duplicates, rejected };
  }
}

function toStore(report: UnsignedPriceReport, index: number, source: string): ReportToStore {
  return { index, asset: report.asset, tsMs: report.ts_ms, priceE8: BigInt(report.price_e8), source };
}
