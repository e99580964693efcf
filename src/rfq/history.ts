// Main thread; reads only. A user's RFQs, newest first (GET /v1/user/rfqs, contract section 13), from the
// `userRfqs` index that the shard writes with each create: a page reads its index rows and their records,
// never the user's whole history. A status filter has no index of its own, so a filtered page walks at most
// USER_RFQS_SCAN_MAX rows; when that bound comes first the page is shorter than `limit` (possibly empty) and
// its cursor says where the walk goes on (the client follows next_cursor until null, as always).
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';
import type { UserRfq } from '../schemas/history.js';
import { toRfqResult, userRfqKey, type RfqStatus } from './records.js';
import { table } from '../store/records.js';

export const USER_RFQS_SCAN_MAX = 1000;

/** Where a page ends: the last row's (created_at_ms, request_id). */
export type UserRfqPosition = [createdAtMs: number, requestId: string];

export function userRfqsPage(
  store: Store,
  userId: string,
  page: { status: RfqStatus | undefined; limit: number; after: UserRfqPosition | null },
): { rfqs: UserRfq[]; next: UserRfqPosition | null } {
  const rfqs: UserRfq[] = [];
  const records = table(store, 'rfqs');
  const afterKey = page.after === null ? null : userRfqKey(userId, page.after[0], page.after[1]);
  let lastListed: UserRfqPosition | null = null;
  let lastScanned: UserRfqPosition | null = null;
  let scanned = 0;
  // Reverse: newest first. The range start is inclusive, so the previous page's last row is read and skipped.
  for (const key of table(store, 'userRfqs').getKeys({ start: afterKey ?? `${userId}:~`, end: `${userId}:`, reverse: true })) {
    if (key === afterKey) continue;
    if (scanned === USER_RFQS_SCAN_MAX) return { rfqs, next: rfqs.length === page.limit ? lastListed : lastScanned };
    // Unfiltered, any row past a full page is a match: no need to read its record.
    if (page.status === undefined && rfqs.length === page.limit) return { rfqs, next: lastListed };
    scanned++;
    const position = positionOf(userId, key);
    lastScanned = position;
    const record = records.get(position[1]);
    assert.ok(record !== undefined && record.userId === userId, `history row ${key} has no RFQ of its user`);
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

function positionOf(userId: string, key: string): UserRfqPosition {
  const rest = key.slice(userId.length + 1);
  const colon = rest.indexOf(':');
  return [Number(rest.slice(0, colon)), rest.slice(colon + 1)];
}
