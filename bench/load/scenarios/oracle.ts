// Scenario `oracle` (issue 19): signed price reports accepted per second in batches of 100 (POST
// /v1/oracle/prices, closed loop, one lane per asset so every batch is in order), and in the same run the
// raw recovery rate of a verify pool of the service's size on the same machine: the denominator, since each
// report costs one recovery. Reports are for past times with no market, so only the intake is measured
// (window resolution is measured by test/oracle/many-windows.test.ts). Signed before the clock starts: the
// client's signing is not the service's cost.
import { availableParallelism } from 'node:os';
import { VerifyPool } from '../../../src/crypto/verify-pool.js';
import { oracleReportBytes } from '../../../src/oracle/signing.js';
import { personalSign, randomWallet } from '../sign.js';
import { startServerFor, type RunContext, type Scenario } from './context.js';

const BATCH_REPORTS = 100;
const LANES = 4;

export interface OracleResult {
  batchReports: number;
  lanes: number;
  verifyThreads: number;
  batches: number;
  acceptedReports: number;
  acceptedPerS: number;
  batchLatencyMsP50: number;
  batchLatencyMsP99: number;
  poolRecoveriesPerS: number;
  ofPoolRate: number;
}

interface Prepared {
  body: string;
}

export const oracle: Scenario<OracleResult> = {
  name: 'oracle',
  describe: "signed price reports accepted/s in batches of 100, against the verify pool's raw recovery rate (same run)",
  async run(ctx: RunContext) {
    const verifyThreads = Math.max(1, availableParallelism() - 1); // the service's default
    const wallet = randomWallet();
    const assets = Array.from({ length: LANES }, (_, i) => `BENCH${i}`);
    const batchesPerLane = ctx.isQuick ? 5 : 150;
    const baseTsMs = Date.now() - 86_400_000;
    ctx.log(`signing ${LANES * batchesPerLane * BATCH_REPORTS} reports`);
    const lanes: Prepared[][] = assets.map((asset) =>
      Array.from({ length: batchesPerLane }, (_, b) => {
        const reports = Array.from({ length: BATCH_REPORTS }, (_, i) => {
          const tsMs = baseTsMs + b * BATCH_REPORTS + i;
          const priceE8 = 1_000_000 + i;
          const sig = personalSign(wallet.privateKey, oracleReportBytes({ asset, tsMs, priceE8 }));
          return { asset, ts_ms: tsMs, price_e8: priceE8, signature: Buffer.from(sig).toString('base64') };
        });
        return { body: JSON.stringify({ reports }) };
      }),
    );

    const server = await startServerFor(ctx, {
      PARLAYD_ORACLE_ADDRESSES: wallet.address,
      PARLAYD_PRICE_ASSETS: assets.join(','),
      PARLAYD_VERIFY_THREADS: String(verifyThreads),
    });
    const latenciesMs: number[] = [];
    let accepted = 0;
    let batches = 0;
    const startedMs = performance.now();
    try {
      await Promise.all(
        lanes.map(async (lane) => {
          for (const { body } of lane) {
            const t0 = performance.now();
            const res = await fetch(`${server.baseUrl}/v1/oracle/prices`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
            });
            const answer = (await res.json()) as { accepted?: number; rejected?: unknown[] };
            if (res.status !== 200 || answer.accepted !== BATCH_REPORTS)
              throw new Error(`batch refused: ${res.status} ${JSON.stringify(answer).slice(0, 200)}`);
            latenciesMs.push(performance.now() - t0);
            accepted += answer.accepted;
            batches++;
          }
        }),
      );
    } finally {
      await server.stop();
    }
    const elapsedS = (performance.now() - startedMs) / 1000;
    const acceptedPerS = Math.round(accepted / elapsedS);

    // The pool alone: the same number of recoveries, submitted as the route does (100 in one turn), with up to
    // LANES batches in flight, on a pool of the service's size in this process.
    const pool = new VerifyPool({ threads: verifyThreads, maxQueue: 10_000 }); // the service's PARLAYD_VERIFY_MAX_QUEUE default
    await pool.whenLoaded();
    const items = lanes.flatMap((lane) =>
      lane.map(({ body }) => JSON.parse(body) as { reports: { asset: string; ts_ms: number; price_e8: number; signature: string }[] }),
    );
    const poolStartedMs = performance.now();
    let recovered = 0;
    try {
      for (let i = 0; i < items.length; i += LANES) {
        await Promise.all(
          items.slice(i, i + LANES).flatMap(({ reports }) =>
            reports.map((r) =>
              pool
                .recoverPersonalSigner(
                  oracleReportBytes({ asset: r.asset, tsMs: r.ts_ms, priceE8: r.price_e8 }),
                  new Uint8Array(Buffer.from(r.signature, 'base64')),
                )
                .then((result) => {
                  if (result.ok) recovered++;
                }),
            ),
          ),
        );
      }
    } finally {
      await pool.close();
    }
    const poolRecoveriesPerS = Math.round(recovered / ((performance.now() - poolStartedMs) / 1000));
    latenciesMs.sort((a, b) => a - b);
    const pct = (p: number) =>
      Math.round((latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(p * latenciesMs.length))] ?? 0) * 10) / 10;
    const result: OracleResult = {
      batchReports: BATCH_REPORTS,
      lanes: LANES,
      verifyThreads,
      batches,
      acceptedReports: accepted,
      acceptedPerS,
      batchLatencyMsP50: pct(0.5),
      batchLatencyMsP99: pct(0.99),
      poolRecoveriesPerS,
      ofPoolRate: Math.round((acceptedPerS / poolRecoveriesPerS) * 100) / 100,
    };
    ctx.log(
      `oracle: ${acceptedPerS} reports/s accepted (${batches} batches of ${BATCH_REPORTS}, p50 ${result.batchLatencyMsP50} ms, ` +
        `p99 ${result.batchLatencyMsP99} ms); pool alone ${poolRecoveriesPerS} recoveries/s on ${verifyThreads} thread(s): ${result.ofPoolRate}x`,
    );
    return result;
  },
};
