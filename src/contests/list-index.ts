// Main thread, owned by the contest actor (contests.ts adds, resolution.ts settles), the only code that
// changes it. The order and filter keys of every contest, so that GET /v1/contests (contract section 8:
// newest first, by status and category) reads from LMDB only the records it answers with. Scanning and
// decoding every record per request cost the main thread, which also serves all HTTP and the makers'
// sockets, time in proportion to every contest ever made (they are never deleted), on a route anyone may
// call without a token.
//
// What lives here is a copy of durable state, so it follows LMDB and never leads it: an entry is added, or
// its status changed, only once the transaction that wrote it has committed. The one gap is a settlement's
// final batch: its commit can be visible to a read (another request's) a moment before the settlement's
// continuation runs and updates the entry. While a settlement runs the entry therefore carries the status it
// may write (`pendingStatus`), and the list decides such a contest by its record instead (queries.ts).
//
// Bound: one entry per contest record, i.e. per contest an operator ever created (a few a day; ~365 a year
// at one a day). Measured at ~190 bytes per contest with node 20 (the object, its 36-char id string, its
// array slot and its map entry; docs/contests.md "The list"): ~2 MB at 10,000 contests.
import assert from 'node:assert/strict';
import type { ContestCategory, ContestStatus } from '../contract/contests.js';
import type { ContestRecord } from '../records/contests.js';

export interface ListEntry {
  readonly contestId: string;
  readonly createdAtMs: number;
  /** The record's seq: the tie-break of equal createdAtMs, unique (a counter). */
  readonly seq: number;
  /** Set at creation and never changed. */
  readonly category: ContestCategory;
  /** As last committed (every status change is a settlement, ending in 'resolved' or 'voided'). */
  status: ContestStatus;
  /** While a settlement runs: the status its final batch writes. null otherwise. */
  pendingStatus: ContestStatus | null;
}

/** A place in the list's order: a page's cursor holds the last entry's. */
export interface ListPosition {
  readonly createdAtMs: number;
  readonly seq: number;
}

/** Ascending (oldest first): the list's "newest first" (createdAtMs, then seq, descending) read backwards. */
const olderFirst = (a: ListPosition, b: ListPosition) => a.createdAtMs - b.createdAtMs || a.seq - b.seq;

export class ContestListIndex {
  /**
   * Oldest first, so that a new contest, which is nearly always the newest, is appended; a walk goes from
   * the end. An older createdAtMs (a clock step back, or two creates committing out of order) is inserted in
   * place: a binary search and one array move, at most one slot per contest.
   */
  private readonly ordered: ListEntry[];
  private readonly byId = new Map<string, ListEntry>();

  /** From every contest record (at start: one scan of the contests, before any request). */
  constructor(records: Iterable<ContestRecord>) {
    const entries: ListEntry[] = [];
    for (const record of records) {
      const entry = entryOf(record);
      assert.ok(!this.byId.has(entry.contestId), `contest ${entry.contestId} twice`);
      this.byId.set(entry.contestId, entry);
      entries.push(entry);
    }
    this.ordered = entries.sort(olderFirst);
  }

  get size(): number {
    return this.ordered.length;
  }

  /**
   * Visits the entries newest first, the order of the list (contract section 8), while `visit` returns true.
   * A callback, not a generator: ~2 ns an entry instead of ~10-30 (measured, node 20), and a list filtered
   * to few matches walks every entry. With `before` (a page's cursor: the last entry of the previous page)
   * the walk starts at the first entry strictly older than it, found by binary search, so a later page
   * costs no more than the first. `before` need not be in the index: any (createdAtMs, seq) is a place in
   * the order, so a cursor stays good whatever was created since it was issued.
   */
  walkNewestFirst(visit: (entry: ListEntry) => boolean, before: ListPosition | null = null): void {
    const start = before === null ? this.ordered.length : this.firstNotOlderThan(before);
    for (let i = start - 1; i >= 0; i--) if (!visit(this.ordered[i]!)) return;
  }

  /** Index of the first entry (oldest first) that is not older than `position`; the length when none. */
  private firstNotOlderThan(position: ListPosition): number {
    let low = 0;
    let high = this.ordered.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (olderFirst(this.ordered[mid]!, position) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Call once the creating transaction has committed. */
  add(record: ContestRecord): void {
    const entry = entryOf(record);
    assert.ok(!this.byId.has(entry.contestId), `contest ${entry.contestId} is indexed already`);
    assert.equal(entry.status, 'open', 'a contest is created open');
    this.byId.set(entry.contestId, entry);
    const last = this.ordered.at(-1);
    if (last === undefined || olderFirst(last, entry) < 0) {
      this.ordered.push(entry);
      return;
    }
    // The first entry newer than this one: everything before it is older (seqs are unique, so none is equal).
    let low = 0;
    let high = this.ordered.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (olderFirst(this.ordered[mid]!, entry) < 0) low = mid + 1;
      else high = mid;
    }
    this.ordered.splice(low, 0, entry);
  }

  /** Call before a settlement's first transaction: from here on its record may say `pendingStatus`. */
  beginSettling(contestId: string, pendingStatus: ContestStatus): void {
    const entry = this.require(contestId);
    assert.equal(entry.status, 'open', `contest ${contestId} settles from ${entry.status}`);
    assert.equal(entry.pendingStatus, null, `contest ${contestId} is settling already`);
    entry.pendingStatus = pendingStatus;
  }

  /**
   * Call once the settlement has ended (finished, failed or interrupted) and no transaction of it is in
   * flight, with the status its record now holds in LMDB.
   */
  endSettling(contestId: string, committedStatus: ContestStatus): void {
    const entry = this.require(contestId);
    assert.ok(entry.pendingStatus !== null, `contest ${contestId} is not settling`);
    assert.ok(
      committedStatus === entry.status || committedStatus === entry.pendingStatus,
      `contest ${contestId} went from ${entry.status} to ${committedStatus} during a settlement to ${entry.pendingStatus}`,
    );
    entry.status = committedStatus;
    entry.pendingStatus = null;
  }

  private require(contestId: string): ListEntry {
    const entry = this.byId.get(contestId);
    assert.ok(entry !== undefined, `contest ${contestId} is not in the list index`);
    return entry;
  }
}

function entryOf(record: ContestRecord): ListEntry {
  return {
    contestId: record.contestId,
    createdAtMs: record.createdAtMs,
    seq: record.seq,
    category: record.category,
    status: record.status,
    pendingStatus: null,
  };
}
