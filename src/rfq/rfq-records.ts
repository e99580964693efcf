// Any thread. The one module that opens the RFQ record family's databases (`rfqs`, `rfqKeys`, `rfqActive`,
// `userRfqs`, `fills`, `makerTakerFills`, `openPositions`): the shard's writes (rfq-writes.ts decides them,
// in its group commit) and every read, the shard's own, the views', GET /v1/rfq/:id's and settlement's.
// Records are checked against their schemas (records.ts, fills.ts) as they are read, so a malformed one fails
// the read with MalformedRecordError naming the database and key; on the shard's path too, where a check costs
// ~0.1 µs against an LMDB read's ~1 µs.
import assert from 'node:assert/strict';
import type { Store } from '../store/db.js';
import { recordCheck } from '../store/record-check.js';
import { table, type BlindWrite } from '../store/records.js';
import {
  FillRecord,
  fillKey,
  makerFillsPrefix,
  makerTakerFillKey,
  makerTakerFillsRange,
  requestIdOfMakerTakerFillKey,
  takerFillsRange,
  takerOfMakerTakerFillKey,
} from '../records/fills.js';
import { openPositionKey, RfqKeyRecord, RfqRecord, userRfqKey, userRfqPositionOf, userRfqRange } from '../records/rfqs.js';
import { clampKey } from '../store/key-range.js';

const checkRfq = recordCheck('rfqs', RfqRecord);
const checkFill = recordCheck('fills', FillRecord);
const checkReplayKey = recordCheck('rfqKeys', RfqKeyRecord);

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
  const start = afterKey === null ? range.end : clampKey(afterKey, range.start, range.end);
  for (const key of table(store, 'userRfqs').getKeys({ start, end: range.start, reverse: true })) {
    if (key !== afterKey) yield userRfqPositionOf(userId, key);
  }
}

/**
 * The request ids of a maker's fills in a range of request ids (`fills` keys without the maker's prefix),
 * lazily: a caller that stops early returns the iterator, which ends LMDB's cursor.
 */
export function* makerFillIds(store: Store, makerAddress: string, range: KeyRange): Generator<string> {
  const prefix = makerFillsPrefix(makerAddress);
  // Both ends inside the maker's keys, whatever the range (the view builds it from a cursor's request id).
  const keys = table(store, 'fills').getKeys({
    start: clampKey(prefix + range.start, prefix, `${prefix}~`),
    end: clampKey(prefix + range.end, prefix, `${prefix}~`),
    ...(range.reverse === undefined ? {} : { reverse: range.reverse }),
    ...(range.limit === undefined ? {} : { limit: range.limit }),
  });
  for (const key of keys) yield key.slice(prefix.length);
}

/** The maker's first taker (by-taker index order) after `afterTaker`, or from the first when null: one seek. */
export function nextTakerOfMaker(store: Store, makerAddress: string, afterTaker: string | null): string | null {
  const { start, end } = makerTakerFillsRange(makerAddress);
  // A taker's range end is where the maker's next taker starts.
  const from = afterTaker === null ? start : clampKey(takerFillsRange(makerAddress, afterTaker, 0).end, start, end);
  for (const key of table(store, 'makerTakerFills').getKeys({ start: from, end, limit: 1 }))
    return takerOfMakerTakerFillKey(makerAddress, key);
  return null;
}

/** One taker's fills with a maker since `sinceMs`, in time order, each checked. */
export function takerFillsSince(store: Store, makerAddress: string, taker: string, sinceMs: number): FillRecord[] {
  const fills: FillRecord[] = [];
  for (const key of table(store, 'makerTakerFills').getKeys(takerFillsRange(makerAddress, taker, sinceMs))) {
    const fill = readFill(store, makerAddress, requestIdOfMakerTakerFillKey(key));
    assert.ok(fill !== undefined, `by-taker index row ${key} has no fill`);
    fills.push(fill);
  }
  return fills;
}

/** Keys of `openPositions` (records.ts openPositionKey: market, request id) in a range. */
export function openPositionKeys(store: Store, range: KeyRange): Iterable<string> {
  return table(store, 'openPositions').getKeys(range);
}

// ---- the shard's writes (rfq-writes.ts, shard-money.ts) --------------------------------------------------
// Decided as data (blind writes), so the same records can be written in a transaction, journaled with the money
// they go with, or replayed into the read model (src/engine); `applyWrites` puts them.

/**
 * A position's settlement: the fill as settled, and the position's legs leave `openPositions`, so a settled
 * position is never walked again.
 */
export function settledPositionWrites(record: RfqRecord, settled: FillRecord): BlindWrite[] {
  const writes: BlindWrite[] = [{ db: 'fills', key: fillKey(settled.makerAddress, settled.requestId), value: settled }];
  for (const leg of record.legs)
    writes.push({ db: 'openPositions', key: openPositionKey(leg.marketId, record.requestId), value: undefined });
  return writes;
}

/** What a replay key points at (the request id and the content it was first used with), if it was used. */
export function readReplayKey(store: Store, replayKey: string): RfqKeyRecord | undefined {
  return checkReplayKey.get(table(store, 'rfqKeys'), replayKey);
}

/**
 * A new RFQ: its record, its replay key, its row in the user's history and, unless its end is written in
 * the same commit, the marker a restart finds it by (rfqActive).
 */
export function createdWrites(created: RfqRecord, replay: { key: string; contentHash: string }, isStillActive: boolean): BlindWrite[] {
  const { requestId } = created;
  const writes: BlindWrite[] = [
    { db: 'rfqs', key: requestId, value: created },
    { db: 'rfqKeys', key: replay.key, value: { requestId, contentHash: replay.contentHash } },
    { db: 'userRfqs', key: userRfqKey(created.userId, created.createdAtMs, requestId), value: true },
  ];
  if (isStillActive) writes.push({ db: 'rfqActive', key: requestId, value: true });
  return writes;
}

/**
 * The marker alone, unless it is there: for an RFQ whose create may have committed without it (its end was to
 * share the commit) and that is active after all: its fill came back UNCOVERED (rfq-writes.ts persistTerminal).
 */
export function markActive(store: Store, requestId: string): void {
  const markers = table(store, 'rfqActive');
  if (markers.get(requestId) === undefined) void markers.put(requestId, true);
}

/**
 * An RFQ's end: its terminal record and, where its create may have marked it active (`isMarked`: the lmdb
 * engine), the marker goes, so a restart no longer finds it.
 */
export function endedWrites(ended: RfqRecord, isMarked: boolean): BlindWrite[] {
  const record: BlindWrite = { db: 'rfqs', key: ended.requestId, value: ended };
  return isMarked ? [record, { db: 'rfqActive', key: ended.requestId, value: undefined }] : [record];
}

/** A fill: the maker's fill record, its by-taker index row and an open position per leg. */
export function fillWrites(completed: RfqRecord, fill: FillRecord): BlindWrite[] {
  const { requestId } = completed;
  const writes: BlindWrite[] = [
    { db: 'fills', key: fillKey(fill.makerAddress, requestId), value: fill },
    { db: 'makerTakerFills', key: makerTakerFillKey(fill.makerAddress, fill.taker, fill.atMs, requestId), value: true },
  ];
  for (const leg of completed.legs) writes.push({ db: 'openPositions', key: openPositionKey(leg.marketId, requestId), value: true });
  return writes;
}

/** The request ids a restart must look at: RFQs that were not terminal when their create committed. */
export function activeRequestIds(store: Store): Iterable<string> {
  return table(store, 'rfqActive').getKeys();
}

/** Recovery decided on an active RFQ (rfq-writes.ts failInterrupted): it is no longer active. */
export function forgetActive(store: Store, requestId: string): void {
  void table(store, 'rfqActive').remove(requestId);
}
