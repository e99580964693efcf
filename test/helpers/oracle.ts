// Price reports for tests: signed by ethers (the independent signer) over the 41 report bytes, and posted to
// the real service's signed or admin route.
import { Wallet, type HDNodeWallet } from 'ethers';
import { oracleReportBytes } from '../../src/oracle/signing.js';
import type { Market } from '../../src/contract/markets.js';
import type { SignedPriceReport, UnsignedPriceReport } from '../../src/contract/oracle.js';
import { client, type HttpResult } from './http.js';
import type { TestServer } from './server.js';
import { waitFor } from './wait.js';

/** A report as POST /v1/admin/oracle/prices takes it, and as signed (src/contract/oracle.ts). */
export type Report = UnsignedPriceReport;
export type SignedReport = SignedPriceReport;

/** ethers' personal-sign of the report bytes, as the route wants it: base64 of r||s||v. */
export async function signReport(wallet: Wallet | HDNodeWallet, report: Report): Promise<SignedReport> {
  const hex = await wallet.signMessage(oracleReportBytes({ asset: report.asset, tsMs: report.ts_ms, priceE8: report.price_e8 }));
  return { ...report, signature: Buffer.from(hex.slice(2), 'hex').toString('base64') };
}

export function signReports(wallet: Wallet | HDNodeWallet, reports: readonly Report[]): Promise<SignedReport[]> {
  return Promise.all(reports.map((r) => signReport(wallet, r)));
}

export function postSigned(server: TestServer, reports: readonly unknown[]): Promise<HttpResult> {
  return client(server.baseUrl).post('/v1/oracle/prices', { reports });
}

export function postAdminReports(server: TestServer, reports: readonly Report[]): Promise<HttpResult> {
  return client(server.baseUrl, server.adminToken).post('/v1/admin/oracle/prices', { reports });
}

export function getMarket(server: TestServer, marketId: number): Promise<HttpResult> {
  return client(server.baseUrl).get(`/v1/markets/${marketId}`);
}

/** The market of the window of `durationSecs` containing `atMs` (created by the lookup). */
export async function windowMarket(server: TestServer, asset: string, durationSecs: number, atMs: number) {
  const res = await client(server.baseUrl).get(`/v1/markets/lookup?asset=${asset}&duration_secs=${durationSecs}&at_ms=${atMs}`);
  if (res.status !== 200) throw new Error(`lookup ${asset}/${durationSecs}/${atMs}: ${res.status} ${JSON.stringify(res.body)}`);
  // A price market (src/contract/markets.ts): its window bounds are always there.
  return res.body.market as Market & { window_start_ms: number; window_end_ms: number };
}

/** Polls GET /v1/markets/{id} until `check` accepts the market, or fails after timeoutMs. */
export async function waitForMarket(
  server: TestServer,
  marketId: number,
  check: (market: Record<string, unknown>) => boolean,
  timeoutMs = 5_000,
): Promise<Record<string, unknown>> {
  let last: HttpResult | null = null;
  return waitFor(
    async () => {
      last = await getMarket(server, marketId);
      return last.status === 200 && check(last.body.market) && (last.body.market as Record<string, unknown>);
    },
    {
      timeoutMs,
      get what() {
        return `market ${marketId} as expected (last read: ${JSON.stringify(last?.body)})`;
      },
    },
  );
}

export const newOracleWallet = (): HDNodeWallet => Wallet.createRandom();
