// Main thread. The one module that opens the contest databases (`contests`, `contestEntries`, `userEntries`,
// `entryKeys`, `contestImages`): the actor's modules (contests.ts, entries.ts, resolution.ts, settlement.ts)
// and the reads (queries.ts, history.ts) all go through it. Every record it reads is checked against its
// schema (records.ts), so a malformed one fails the read with MalformedRecordError naming the database and
// key, never reaching a view or a settlement. Writes are made inside the caller's transaction, or handed to
// the user's shard as decided writes (RecordWrite) when they go with the entry's stake.
import type { RecordWrite, UserDebit } from '../ledger/money-ops.js';
import type { Store } from '../store/db.js';
import { recordCheck } from '../store/record-check.js';
import { table, type TypedWrite } from '../store/records.js';
import { clampKey } from '../store/key-range.js';
import {
  ContestRecord,
  contestEntryRange,
  EntryKeyRecord,
  entryKey,
  EntryRecord,
  ImageRecord,
  userEntriesRange,
  userEntryKey,
  userEntryPositionOf,
  userEntryRange,
} from '../records/contests.js';

const checkContest = recordCheck('contests', ContestRecord);
const checkEntry = recordCheck('contestEntries', EntryRecord);
const checkEntryKey = recordCheck('entryKeys', EntryKeyRecord);
const checkImage = recordCheck('contestImages', ImageRecord);

export class ContestRecords {
  constructor(private readonly store: Store) {}

  // ---- contests and their images ----

  contest(contestId: string): ContestRecord | undefined {
    return checkContest.get(table(this.store, 'contests'), contestId);
  }

  /** Every contest, one record decoded at a time (lmdb-js's lazy range): the list index is built from them at start. */
  *allContests(): Generator<ContestRecord> {
    for (const { key, value } of table(this.store, 'contests').getRange()) yield checkContest.value(key, value);
  }

  /** Inside the caller's transaction, on the contest's lane. */
  putContest(contest: ContestRecord): void {
    void table(this.store, 'contests').put(contest.contestId, contest);
  }

  /** The contest's record as a write another owner makes with its money (the journal engine's pools). */
  contestWrite(contest: ContestRecord): TypedWrite<'contests'> {
    return { db: 'contests', key: contest.contestId, value: contest };
  }

  image(contestId: string): ImageRecord | undefined {
    return checkImage.get(table(this.store, 'contestImages'), contestId);
  }

  /** Inside the contest's creation transaction. */
  putImage(contestId: string, image: ImageRecord): void {
    void table(this.store, 'contestImages').put(contestId, image);
  }

  removeImage(contestId: string): void {
    void table(this.store, 'contestImages').remove(contestId);
  }

  // ---- entries ----

  entry(contestId: string, userId: string, entryIndex: number): EntryRecord | undefined {
    return checkEntry.get(table(this.store, 'contestEntries'), entryKey(contestId, userId, entryIndex));
  }

  /** Inside the caller's transaction (a continuation, which moves no money). */
  putEntry(entry: EntryRecord): void {
    void table(this.store, 'contestEntries').put(entryKey(entry.contestId, entry.userId, entry.entryIndex), entry);
  }

  /**
   * A contest's entries in key order, strictly after `afterKey` (from its first when null), at most `limit`:
   * how settlement batches, scoring pages and admin pages walk a contest from the last key they saw without
   * holding its entries. LMDB's range start is inclusive, so `afterKey` itself is read and skipped here.
   */
  *entriesAfter(
    contestId: string,
    afterKey: string | null,
    limit = Number.POSITIVE_INFINITY,
  ): Generator<{ key: string; value: EntryRecord }> {
    if (limit <= 0) return;
    const range = contestEntryRange(contestId);
    const readLimit = Number.isFinite(limit) ? { limit: limit + 1 } : {};
    let yielded = 0;
    for (const { key, value } of table(this.store, 'contestEntries').getRange({
      start: afterKey === null ? range.start : clampKey(afterKey, range.start, range.end),
      end: range.end,
      ...readLimit,
    })) {
      if (key === afterKey) continue;
      yield { key, value: checkEntry.value(key, value) };
      if (++yielded === limit) return;
    }
  }

  /** One user's entries in a contest, in entry_index order (keys are zero-padded); at most `limit`. */
  *userEntriesOf(contestId: string, userId: string, limit: number): Generator<EntryRecord> {
    const range = userEntryRange(contestId, userId);
    for (const { key, value } of table(this.store, 'contestEntries').getRange({ ...range, limit })) {
      yield checkEntry.value(key, value);
    }
  }

  /** One user's entries in a contest, highest entry_index first, strictly below `beforeIndex` (from the highest when null). */
  *userEntriesNewestFirst(contestId: string, userId: string, beforeIndex: number | null, limit: number): Generator<EntryRecord> {
    const range = userEntryRange(contestId, userId);
    const start = beforeIndex === null ? range.end : clampKey(entryKey(contestId, userId, beforeIndex), range.start, range.end);
    let yielded = 0;
    for (const { key, value } of table(this.store, 'contestEntries').getRange({
      start,
      end: range.start,
      reverse: true,
      limit: limit + 1,
    })) {
      if (beforeIndex !== null && key === start) continue;
      if (yielded++ === limit) return;
      yield checkEntry.value(key, value);
    }
  }

  /**
   * A user's entries in every contest as (created_at_ms, contest id, entry_index), newest first, strictly
   * older than `after` (from the newest when null): the `userEntries` index, read lazily.
   */
  *userEntryPositions(
    userId: string,
    after: [createdAtMs: number, contestId: string, entryIndex: number] | null,
  ): Generator<[createdAtMs: number, contestId: string, entryIndex: number]> {
    const range = userEntriesRange(userId);
    const afterKey = after === null ? null : userEntryKey(userId, ...after);
    const start = afterKey === null ? range.end : clampKey(afterKey, range.start, range.end);
    for (const key of table(this.store, 'userEntries').getKeys({ start, end: range.start, reverse: true })) {
      if (key !== afterKey) yield userEntryPositionOf(userId, key);
    }
  }

  // ---- entry idempotency keys (records.ts entryKeyRecordKey) ----

  entryKeyRecord(key: string): EntryKeyRecord | undefined {
    return checkEntryKey.get(table(this.store, 'entryKeys'), key);
  }

  /** Inside the caller's transaction (a continuation's key). */
  putEntryKey(key: string, record: EntryKeyRecord): void {
    void table(this.store, 'entryKeys').put(key, record);
  }
}

/**
 * What a new entry writes, for the user's shard to commit with the entry's stake (entries.ts decide): the
 * entry, the contest with its new count, the entry's place in the user's history, and its idempotency key's
 * record, which must not exist yet (`uniqueKeys`).
 */
export function newEntryWrites(
  entry: EntryRecord,
  counted: ContestRecord,
  keyed: { key: string; record: EntryKeyRecord } | null,
): Pick<UserDebit, 'writes' | 'uniqueKeys'> {
  const writes: RecordWrite[] = [
    { db: 'contestEntries', key: entryKey(entry.contestId, entry.userId, entry.entryIndex), value: entry },
    { db: 'contests', key: counted.contestId, value: counted },
    { db: 'userEntries', key: userEntryKey(entry.userId, entry.createdAtMs, entry.contestId, entry.entryIndex), value: true },
  ];
  if (keyed === null) return { writes, uniqueKeys: [] };
  writes.push({ db: 'entryKeys', key: keyed.key, value: keyed.record });
  return { writes, uniqueKeys: [{ db: 'entryKeys', key: keyed.key }] };
}

/** An entry as settled, for its user's shard to write with the entry's money (settlement.ts). */
export function settledEntryWrite(key: string, settled: EntryRecord): TypedWrite<'contestEntries'> {
  return { db: 'contestEntries', key, value: settled };
}
