// Main thread. Price reports (contract section 12): signed by a configured oracle address (no bearer: the
// signature is the trust), or unsigned from the admin. docs/oracle.md.
import { defineRoute, json } from '../route.js';
import type { Services } from '../services.js';
import { rateLimited } from '../../lib/errors.js';
import type { RateLimiter } from '../../lib/rate-limit.js';
import { PriceReportsAnswer, SignedPriceReports, UnsignedPriceReports } from '../../contract/oracle.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type OracleRouteDeps = Pick<Services, 'oracle' | 'clock'>;

/**
 * `rateLimiter`: the caller's HTTP bucket. A signed post pays a token per report (the server took one for the
 * request): each report may cost a recovery, and one request may carry ~390, so per request a caller's rate
 * bought 390 times the work.
 */
export function oracleRoutes(s: OracleRouteDeps, rateLimiter: Pick<RateLimiter, 'take'>) {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/oracle/prices',
      tag: 'oracle',
      auth: 'none',
      summary: 'Signed price reports (at most 1,000; the 64 KiB body holds ~390 signed ones); each refused alone with its index and code',
      body: SignedPriceReports,
      responses: { 200: PriceReportsAnswer },
      handler: async ({ body, rateKey }) => {
        if (rateKey !== null && body.reports.length > 1) {
          const retryAfterS = rateLimiter.take(rateKey, s.clock.nowMs(), body.reports.length - 1);
          if (retryAfterS > 0) throw rateLimited(retryAfterS);
        }
        return json(200, await s.oracle.intake.submitSigned(body.reports));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/oracle/prices',
      tag: 'admin',
      auth: 'admin',
      summary: 'Unsigned price reports from the admin (at most 1,000); the same rules as signed ones otherwise',
      body: UnsignedPriceReports,
      responses: { 200: PriceReportsAnswer },
      handler: async ({ body }) => json(200, await s.oracle.intake.submitUnsigned(body.reports)),
    }),
  ];
}
