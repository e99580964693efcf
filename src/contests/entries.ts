// Main thread, called by the contest actor (contests.ts) on the contest's lane only: what one entry request
// decides (contract section 8) and the write that makes it durable. A new entry moves money, which only the
// user's shard may decide (ledger.ts): the entry and the contest's new entriesFilled go to that shard with the
// stake to reserve (BalanceOwners.moveMoney 'reserve'), and the shard writes all three together, or refuses
// INSUFFICIENT_BALANCE and writes nothing. A survivor/streak continuation moves no money and is written here.
// The lane is what makes reading the contest outside a transaction safe: no other change of it can interleave.
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { ApiError, errors } from '../lib/errors.js';
import type { BalanceOwners } from '../ledger/owners.js';
import type { ContestEntryRequest, ContestEntryResponse } from '../contract/contests.js';
import type { Store } from '../store/db.js';
import { ContestRecords, newEntryWrites } from './contest-records.js';
import { entryKeyRecordKey, entryRef, type ContestRecord, type EntryKeyRecord, type EntryRecord } from '../records/contests.js';
import { checkEntryWindow, checkPicks, isEliminated } from './rules.js';
import { entryOutcomes } from './views.js';
import type { MarketOf } from '../contract/markets.js';

export interface EntryAccepted {
  /** 201 for a new entry, 200 for a survivor/streak continuation (contract section 8). */
  status: 200 | 201;
  body: ContestEntryResponse;
}

/** An entry the lane has decided to accept: its answer, once `write` (the durable part) has resolved. */
export interface EntryDecision {
  accepted: EntryAccepted;
  write: () => Promise<unknown>;
}

export class ContestEntries {
  private readonly records: ContestRecords;

  constructor(
    private readonly store: Store,
    private readonly owners: BalanceOwners,
    private readonly marketOf: MarketOf,
  ) {
    this.records = new ContestRecords(store);
  }

  /**
   * Contract section 13: an entry's idempotency key seen before answers that entry again (200), whatever has
   * happened to the contest since, or 409 IDEMPOTENCY_CONFLICT for other content. Racing retries of one key
   * on one contest are serialized by its lane; on two contests, the user's shard refuses the second key
   * record in its transaction (the 'reserve' op's uniqueKeys).
   */
  replayOf(userId: string, request: ContestEntryRequest): EntryAccepted | null {
    if (request.idempotency_key === undefined) return null;
    const record = this.records.entryKeyRecord(entryKeyRecordKey(userId, request.idempotency_key));
    if (record === undefined) return null;
    if (record.contentHash !== entryContentHash(request)) throw new ApiError('IDEMPOTENCY_CONFLICT');
    return { status: 200, body: { contest_id: record.contestId, entry_index: record.entryIndex, reserved_micros: record.reservedMicros } };
  }

  /** Throws the contract error that refuses the entry, or returns it and its write. */
  decide(userId: string, request: ContestEntryRequest, nowMs: number): EntryDecision {
    const contest = this.records.contest(request.contest_id);
    if (contest === undefined) throw new ApiError('CONTEST_NOT_FOUND');
    checkEntryWindow(contest, nowMs);
    if (request.entry_index !== undefined) return this.decideContinuation(contest, userId, request.entry_index, request, nowMs);

    checkPicks(contest, request.bets, [], this.marketOf, nowMs);
    if (contest.entriesFilled >= contest.entryCap) throw new ApiError('CONTEST_FULL');
    const entryIndex = this.nextEntryIndex(contest.contestId, userId);
    const entry: EntryRecord = {
      contestId: contest.contestId,
      userId,
      entryIndex,
      seq: contest.entriesFilled,
      createdAtMs: nowMs,
      picks: request.bets.map((b) => ({ marketId: b.market_id, direction: b.direction })),
      stakeMicros: contest.betAmountMicros,
      settlement: null,
    };
    assert.equal(this.records.entry(contest.contestId, userId, entryIndex), undefined, `entry ${entryRef(entry)} exists already`);
    const updated: ContestRecord = { ...contest, entriesFilled: contest.entriesFilled + 1 };
    assert.ok(updated.entriesFilled <= updated.entryCap, 'entry_cap overrun');
    return {
      accepted: {
        status: 201,
        body: { contest_id: contest.contestId, entry_index: entryIndex, reserved_micros: String(contest.betAmountMicros) },
      },
      // The user's shard decides the stake (INSUFFICIENT_BALANCE) and writes it with the entry, the count,
      // the entry's place in the user's history and its idempotency key.
      write: () => {
        const keyed = this.keyRecordOf(userId, request, entryIndex, String(contest.betAmountMicros));
        return this.owners.moveMoney(this.owners.shardOfUser(userId), {
          op: 'reserve',
          userId,
          amountMicros: String(contest.betAmountMicros),
          ref: entryRef(entry),
          ...newEntryWrites(entry, updated, keyed),
          atMs: nowMs,
        });
      },
    };
  }

  /** Survivor/streak: more picks on an entry that is still alive; nothing is reserved, no money moves. */
  private decideContinuation(
    contest: ContestRecord,
    userId: string,
    entryIndex: number,
    request: ContestEntryRequest,
    nowMs: number,
  ): EntryDecision {
    if (contest.gameType !== 'survivor' && contest.gameType !== 'streak') throw errors.entryNotContinuable(contest.gameType);
    const entry = this.records.entry(contest.contestId, userId, entryIndex);
    if (entry === undefined) throw errors.entryNotFound(entryIndex);
    if (isEliminated(entryOutcomes(entry, this.marketOf))) throw new ApiError('ENTRY_ELIMINATED');
    checkPicks(contest, request.bets, entry.picks, this.marketOf, nowMs);
    const picks = [...entry.picks, ...request.bets.map((b) => ({ marketId: b.market_id, direction: b.direction }))];
    return {
      accepted: { status: 200, body: { contest_id: contest.contestId, entry_index: entryIndex, reserved_micros: '0' } },
      write: () => {
        const keyed = this.keyRecordOf(userId, request, entryIndex, '0');
        return this.store.transact(() => {
          // Inside the transaction: a new entry's key is written by a shard, and LMDB orders the two.
          if (keyed !== null && this.records.entryKeyRecord(keyed.key) !== undefined) throw new ApiError('IDEMPOTENCY_CONFLICT');
          this.records.putEntry({ ...entry, picks });
          if (keyed !== null) this.records.putEntryKey(keyed.key, keyed.record);
        });
      },
    };
  }

  /** The key record an entry made with an idempotency key writes, with its database key; null without one. */
  private keyRecordOf(userId: string, request: ContestEntryRequest, entryIndex: number, reservedMicros: string) {
    if (request.idempotency_key === undefined) return null;
    const record: EntryKeyRecord = { contestId: request.contest_id, entryIndex, contentHash: entryContentHash(request), reservedMicros };
    return { key: entryKeyRecordKey(userId, request.idempotency_key), record };
  }

  /**
   * One past the user's highest entry index in the contest. Indexes are dense from 0 and never deleted, and
   * keys pad them to sort in order, so that is the last key of the user's range: one B-tree descent, where
   * counting the user's keys made each new entry cost as many reads as the user already had (up to entry_cap).
   */
  private nextEntryIndex(contestId: string, userId: string): number {
    for (const entry of this.records.userEntriesNewestFirst(contestId, userId, null, 1)) return entry.entryIndex + 1;
    return 0;
  }
}

/** What an entry's idempotency key stands for: the contest, the entry continued (if any) and the picks. */
function entryContentHash(request: ContestEntryRequest): string {
  return hash(
    'sha256',
    JSON.stringify([request.contest_id, request.entry_index ?? null, request.bets.map((b) => [b.market_id, b.direction])]),
  );
}
