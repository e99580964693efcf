// Main thread; reads only. A user's RFQs, newest first (GET /v1/user/rfqs, contract section 13), from the
// `userRfqs` index that the shard writes with each create: a page reads its index rows and their records,
// never the user's whole history. A status filter has no index of its own, so a filtered page walks at most
// USER_RFQS_SCAN_MAX rows; when that bound comes first the page is shorter than `limit` (possibly empty) and
// its cursor says where the walk goes on (the client follows next_cursor until null, as always).
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';
import type { UserRfq } from '../contract/history.js';
import { toRfqResult, type RfqStatus } from '../records/rfqs.js';
import { readRfq, userRfqsNewestFirst } from './rfq-records.js';

export const USER_RFQS_SCAN_MAX = 1000;

/** Where a page ends: the last row's (created_at_ms, request_id). */
export type UserRfqPosition = [createdAtMs: number, requestId: string];

export function userRfqsPage(
  store: Store,
  userId: string,
  page: { status: RfqStatus | undefined; limit: number; after: UserRfqPosition | null },
): { rfqs: UserRfq[]; next: UserRfqPosition | null } {
  const rfqs: UserRfq[] = [];
  let lastListed: UserRfqPosition | null = null;
  let lastScanned: UserRfqPosition | null = null;
  let scanned = 0;
  for (const position of userRfqsNewestFirst(store, userId, page.after)) {
    if (scanned === USER_RFQS_SCAN_MAX) return { rfqs, next: rfqs.length === page.limit ? lastListed : lastScanned };
    // Unfiltered, any row past a full page is a match: no need to read its record.
    if (page.status === undefined && rfqs.length === page.limit) return { rfqs, next: lastListed };
    scanned++;
    lastScanned = position;
    const record = readRfq(store, position[1]);
    assert.ok(record !== undefined && record.userId === userId, `history row ${position.join(':')} of ${userId} has no RFQ of its user`);
    if (page.status !== undefined && record.status !== page.status) continue;
    if (rfqs.length === page.limit) return { rfqs, next: lastListed };
    const result = toRfqResult(record);
    // Field by field, not a leading spread (docs/performance.md, "Allocation shapes"; test/style).
    rfqs.push({
      request_id: result.request_id,
      status: result.status,
      odds: result.odds,
      payout_micros: result.payout_micros,
      filled_wager_micros: result.filled_wager_micros,
      error: result.error,
      quotes_received: result.quotes_received,
      created_at_ms: record.createdAtMs,
      legs: record.legs.map((leg) => ({ market_id: leg.marketId, direction: leg.direction })),
      wager_micros: record.wagerMicros,
    });
    lastListed = position;
  }
  return { rfqs, next: null };
}
