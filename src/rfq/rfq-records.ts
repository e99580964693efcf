// Any thread. The reads of the RFQ record family (`rfqs`, `userRfqs`, `fills`, `makerTakerFills`,
// `openPositions`) for everything but the shard's own per-create path: the views, GET /v1/rfq/:id, and
// settlement. Records are checked against their schemas (records.ts, fills.ts) as they are read, so a
// malformed one fails the read with MalformedRecordError naming the database and key. The shard writes these
// databases in rfq-writes.ts and reads its own fresh records there and in shard.ts unchecked: those reads run
// for every RFQ, and what they read was written by the same typed code a moment before.
import type { Store } from '../store/db.js';
import { recordCheck } from '../store/record-check.js';
import { table } from '../store/records.js';
import { FillRecord, fillKey } from './fills.js';
import { openPositionKey, RfqRecord, userRfqKey, userRfqPositionOf, userRfqRange } from './records.js';

const checkRfq = recordCheck('rfqs', RfqRecord);
const checkFill = recordCheck('fills', FillRecord);

/** A key range, as LMDB reads one: `start` inclusive, `end` exclusive (reverse: from `start` down to `end`). */
export interface KeyRange {
  start: string;
  end: string;
  reverse?: boolean;
  limit?: number;
}

/** An RFQ's record, checked; undefined when there is none. */
export function readRfq(store: Store, requestId: string): RfqRecord | undefined {
  return checkRfq.get(table(store, 'rfqs'), requestId);
}

/** A maker's fill of a request, checked; undefined when there is none. */
export function readFill(store: Store, makerAddress: string, requestId: string): FillRecord | undefined {
  return checkFill.get(table(store, 'fills'), fillKey(makerAddress, requestId));
}

/**
 * A user's RFQs as (created_at_ms, request_id), newest first, strictly older than `after` (from the newest
 * when null): the `userRfqs` index, read lazily, so a page reads only the rows it walks.
 */
export function* userRfqsNewestFirst(
  store: Store,
  userId: string,
  after: [createdAtMs: number, requestId: string] | null,
): Generator<[createdAtMs: number, requestId: string]> {
  const range = userRfqRange(userId);
  const afterKey = after === null ? null : userRfqKey(userId, after[0], after[1]);
  // Reverse: newest first. The range start is inclusive, so the previous page's last row is read and skipped.
  for (const key of table(store, 'userRfqs').getKeys({ start: afterKey ?? range.end, end: range.start, reverse: true })) {
    if (key !== afterKey) yield userRfqPositionOf(userId, key);
  }
}

/** Keys of `fills` (fills.ts fillKey: maker, request id) in a range. */
export function fillKeys(store: Store, range: KeyRange): Iterable<string> {
  return table(store, 'fills').getKeys(range);
}

/** Keys of `makerTakerFills` (fills.ts makerTakerFillKey: maker, taker, time, request id) in a range. */
export function makerTakerFillKeys(store: Store, range: KeyRange): Iterable<string> {
  return table(store, 'makerTakerFills').getKeys(range);
}

/** Keys of `openPositions` (records.ts openPositionKey: market, request id) in a range. */
export function openPositionKeys(store: Store, range: KeyRange): Iterable<string> {
  return table(store, 'openPositions').getKeys(range);
}

/**
 * A position's settlement, inside the settling shard's transaction (shard-money.ts): the fill as settled, and
 * the position's legs leave `openPositions`, so a settled position is never walked again.
 */
export function writeSettledPosition(store: Store, record: RfqRecord, settled: FillRecord): void {
  void table(store, 'fills').put(fillKey(settled.makerAddress, settled.requestId), settled);
  for (const leg of record.legs) void table(store, 'openPositions').remove(openPositionKey(leg.marketId, record.requestId));
}
