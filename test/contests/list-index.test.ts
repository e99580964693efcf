// The list index (contests/list-index.ts), pure: the contract's "newest first" (createdAtMs, then seq,
// descending) however records arrive, and a status that changes only through a settlement's begin and end.
import assert, { AssertionError } from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContestListIndex, type ListEntry } from '../../src/contests/list-index.js';
import type { ContestRecord } from '../../src/records/contests.js';

let nextSeq = 0;

/** The fields the index reads; the rest of a record does not matter to it. */
function record(createdAtMs: number, fields: Partial<Pick<ContestRecord, 'seq' | 'status' | 'category'>> = {}): ContestRecord {
  const seq = fields.seq ?? nextSeq++;
  return { contestId: `contest-${seq}`, createdAtMs, seq, status: 'open', category: 'sports', ...fields } as ContestRecord;
}

/** The order the list had when it sorted every record per request (contests.ts before the index). */
const newestFirst = (records: readonly ContestRecord[]) =>
  [...records].sort((a, b) => b.createdAtMs - a.createdAtMs || b.seq - a.seq).map((r) => r.contestId);
/** Every entry, newest first. */
function entriesOf(index: ContestListIndex): ListEntry[] {
  const entries: ListEntry[] = [];
  index.walkNewestFirst((entry) => entries.push(entry) > 0);
  return entries;
}
const idsOf = (index: ContestListIndex) => entriesOf(index).map((e) => e.contestId);

/** A deterministic pseudo-random sequence (xorshift32), so a failure replays. */
function randoms(seed: number) {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('ContestListIndex order', () => {
  it('built from records in any order (LMDB gives them by id), it walks newest first, ties by seq', () => {
    const random = randoms(7);
    // Few distinct times: many ties, which seq must break.
    const records = Array.from({ length: 500 }, () => record(1_000 + Math.floor(random() * 20)));
    for (let i = records.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [records[i], records[j]] = [records[j]!, records[i]!];
    }
    const index = new ContestListIndex(records);
    assert.equal(index.size, 500);
    assert.deepEqual(idsOf(index), newestFirst(records));
  });

  it('a new contest is added in its place, also one older than the newest (a clock step back, creates committing out of order)', () => {
    const random = randoms(11);
    const initial = [record(5_000), record(5_000), record(6_000)];
    const index = new ContestListIndex(initial);
    const all = [...initial];
    for (let i = 0; i < 300; i++) {
      // Mostly the newest, as in service; one in three earlier than some already there.
      const createdAtMs = i % 3 === 0 ? 4_000 + Math.floor(random() * 3_000) : 7_000 + i;
      const added = record(createdAtMs);
      index.add(added);
      all.push(added);
    }
    assert.deepEqual(idsOf(index), newestFirst(all));
  });

  it('a walk stops where its visitor says', () => {
    const index = new ContestListIndex([record(1), record(2), record(3)]);
    const visited: number[] = [];
    index.walkNewestFirst((entry) => visited.push(entry.createdAtMs) < 2);
    assert.deepEqual(visited, [3, 2]);
  });

  it('the same contest twice is a bug: AssertionError', () => {
    const index = new ContestListIndex([record(1, { seq: 900_001 })]);
    assert.throws(() => index.add(record(2, { seq: 900_001 })), AssertionError);
    assert.throws(() => new ContestListIndex([record(1, { seq: 900_002 }), record(1, { seq: 900_002 })]), AssertionError);
  });
});

describe('ContestListIndex status', () => {
  const statusOf = (index: ContestListIndex, contestId: string) => entriesOf(index).find((e) => e.contestId === contestId);

  it('a settlement carries the status it may write until it ends, then the status LMDB holds', () => {
    const [a, b] = [record(1), record(2)];
    const index = new ContestListIndex([a, b]);
    index.beginSettling(a.contestId, 'resolved');
    assert.deepEqual([statusOf(index, a.contestId)!.status, statusOf(index, a.contestId)!.pendingStatus], ['open', 'resolved']);
    index.endSettling(a.contestId, 'resolved');
    assert.deepEqual([statusOf(index, a.contestId)!.status, statusOf(index, a.contestId)!.pendingStatus], ['resolved', null]);
    // A settlement that failed before its final batch: still open, and it may begin again.
    index.beginSettling(b.contestId, 'voided');
    index.endSettling(b.contestId, 'open');
    assert.deepEqual([statusOf(index, b.contestId)!.status, statusOf(index, b.contestId)!.pendingStatus], ['open', null]);
    index.beginSettling(b.contestId, 'voided');
    index.endSettling(b.contestId, 'voided');
    assert.equal(statusOf(index, b.contestId)!.status, 'voided');
  });

  it('a status no settlement could have written, a second settlement, or an unknown contest is a bug: AssertionError', () => {
    const [a, b] = [record(1), record(2, { status: 'resolved' })];
    const index = new ContestListIndex([a, b]);
    index.beginSettling(a.contestId, 'voided');
    assert.throws(() => index.beginSettling(a.contestId, 'voided'), AssertionError);
    assert.throws(() => index.endSettling(a.contestId, 'resolved'), AssertionError);
    assert.throws(() => index.beginSettling(b.contestId, 'voided'), AssertionError, 'a resolved contest does not settle again');
    assert.throws(() => index.endSettling(b.contestId, 'resolved'), AssertionError, 'not settling');
    assert.throws(() => index.beginSettling('contest-unknown', 'voided'), AssertionError);
    assert.throws(() => index.add(record(3, { status: 'voided' })), AssertionError, 'a contest is created open');
  });
});
