// Main thread. The contest actor (contract section 8, docs/contests.md): the one owner of contest state.
//
// Every change of a contest (creation, entry, continuation, resolution, void) is a task on that contest's
// serial lane (serial-queue.ts): it reads the durable state (the pool renews this thread's snapshot when a
// shard's answer arrives, shard-pool.ts refreshReads), decides with the pure rules (rules.ts,
// scoring.ts), and has everything the decision implies written in ONE transaction. A new entry moves money,
// which only the user's shard may decide (ledger.ts): the entry and the contest's new entriesFilled go to
// that shard with the stake to reserve (BalanceOwners.moveMoney 'reserve'), and the shard writes all three
// together, or refuses INSUFFICIENT_BALANCE and writes nothing. LMDB commits a transaction whole or not at
// all, so a kill -9 leaves either the entry with its reservation and its count, or none of them; the lane
// means two entries of one contest are never decided against the same state, so entry_cap cannot be overrun.
//
// Resolution and voiding are the exception: they settle every entry, up to entry_cap = 1,000,000, so they
// are one task on the lane but many transactions, in bounded batches (settlement.ts), each durable with its
// progress, so the main thread is never held for long and a crash between batches is finished by recover().
// Resolution is driven by market resolutions (Markets.onResolved) and, at start, by recover(), which finishes
// any contest whose markets all became final, or whose settlement was cut short, while the process was down
// or crashing. Both go through the same idempotent task, so running it twice changes nothing.
//
// The public list (GET /v1/contests) walks an in-memory index of every contest's order and filter keys
// (list-index.ts), kept here after each committed creation and settlement, and reads only the records it
// returns: contests are never deleted, so reading them all per request grew without bound.
import type { Ledger } from '../ledger/ledger.js';
import assert, { AssertionError } from 'node:assert/strict';
import { hash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { UserPrincipal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { BalanceOwners } from '../ledger/owners.js';
import { isOpenForBetting, type Markets } from '../markets/markets.js';
import type { Market } from '../schemas/markets.js';
import {
  CONTEST_LIST_PAGE,
  type ContestDetail,
  type ContestEntryRequest,
  type ContestEntryResponse,
  type ContestSummary,
  type CreateContest,
} from '../schemas/contests.js';
import { nextCounterInTxn } from '../store/counters.js';
import type { Store } from '../store/db.js';
import { decodeImage, defaultImage, type ServedImage } from './images.js';
import { ContestListIndex, type ListEntry, type ListPosition } from './list-index.js';
import {
  contestEntriesAfter,
  contestOfEntryKey,
  entryKey,
  entryKeyRecordKey,
  entryRef,
  userEntryKey,
  userEntryRange,
  type EntryKeyRecord,
  type ContestRecord,
  type EntryRecord,
  type ImageRecord,
} from './records.js';
import { checkContestConfig, checkEntryWindow, checkPicks, isEliminated } from './rules.js';
import { SerialQueues } from './serial-queue.js';
import { ContestSettler, SettlementInterrupted, type SettlementKind, type SettlerOptions } from './settlement.js';
import { callerEntryView, callerView, detailView, entryOutcomes, summaryView } from './views.js';

/** Tasks waiting on one contest's lane before new ones are refused with 503 OVERLOADED. */
export const MAX_QUEUED_TASKS_PER_CONTEST = 4096;
/** The route's bounds on `limit` (schemas/contests.ts), which list() asserts: a page reads at most this many records. */
const MAX_LIST_LIMIT = CONTEST_LIST_PAGE.maxLimit;
const DEFAULT_LIST_LIMIT = CONTEST_LIST_PAGE.defaultLimit;

export interface ListFilter {
  status?: ContestRecord['status'] | undefined;
  category?: ContestRecord['category'] | undefined;
}
export interface ContestPage {
  contests: ContestSummary[];
  /** Where the next page starts (the last contest of this one), or null on the last page. */
  next: ListPosition | null;
}

export interface EntryAccepted {
  /** 201 for a new entry, 200 for a survivor/streak continuation (contract section 8). */
  status: 200 | 201;
  body: ContestEntryResponse;
}

export type AdminEntry = ReturnType<typeof callerEntryView> & { user_id: string };
export interface AdminEntriesPage {
  entries: AdminEntry[];
  /** The key of the page's last entry when another entry follows it (the next page starts after it), else null. */
  nextKey: string | null;
}

/** Entries in one page of GET /v1/admin/contests/{id}/entries (the route's `limit` maximum and default). */
export const MAX_ADMIN_ENTRIES_PAGE = 1000;

/** Whether `key` is an entry key (records.ts entryKey) of `contestId`: the shape of an admin entries cursor. */
export const isEntryKeyOf = (contestId: string, key: string) => contestOfEntryKey(key) === contestId;

export interface ContestsOptions {
  /** Entries per settlement transaction (settlement.ts, SETTLE_BATCH_ENTRIES by default) and a progress hook. */
  settlement?: SettlerOptions;
}

export class Contests {
  /**
   * Bumped when any contest task ends (creation, entry, settlement, void: every change of a contest is a
   * task on its lane), before its caller is answered: a page of the list cached under an older version
   * may be stale (routes/contests.ts caches serialized pages under it).
   */
  #listVersion = 0;
  private readonly lanes = new SerialQueues(MAX_QUEUED_TASKS_PER_CONTEST, () => this.#listVersion++);
  /** Open contests by market id: the contests a market resolution may finish. In memory, rebuilt by recover(). */
  private readonly openByMarket = new Map<number, Set<string>>();
  private readonly marketOf = (marketId: number): Market | undefined => this.markets.get(marketId);
  private readonly settler: ContestSettler;
  /** Finishes queued on a contest's lane and not yet started, by contest id (finishIfFinal). */
  private readonly waitingFinishes = new Map<string, Promise<ContestRecord | null>>();
  /**
   * Every contest's order and filter keys, newest first, so a list reads only the records it returns
   * (list-index.ts). Built here from one scan, so it is whole before anything can use it (recover(), a list,
   * a create, or a test that never calls recover()); changed only after the write it mirrors has committed.
   */
  private readonly listIndex: ContestListIndex;
  private isStopping = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly owners: BalanceOwners,
    private readonly markets: Markets,
    private readonly log: Logger,
    /** The main thread's ledger: a contest's prize pool is the protocol's money (contract section 11). */
    private readonly ledger: Ledger,
    options: ContestsOptions = {},
  ) {
    this.settler = new ContestSettler(store, owners, ledger, this.marketOf, () => this.isStopping, options.settlement);
    // One read of every record, once per start (~tens of ms after years of contests), instead of per list.
    // lmdb-js's lazy map: one record decoded at a time, never all of them held at once.
    this.listIndex = new ContestListIndex(this.contests.getRange().map(({ value }) => value));
    markets.onResolved((market) => this.onMarketResolved(market));
  }

  private get contests() {
    return this.store.db<ContestRecord>('contests');
  }
  private get entries() {
    return this.store.db<EntryRecord>('contestEntries');
  }
  private get entryKeys() {
    return this.store.db<EntryKeyRecord>('entryKeys');
  }
  private get images() {
    return this.store.db<ImageRecord>('contestImages');
  }

  // ---- admin ----

  /** Durable before it resolves. VALIDATION_FAILED, MARKET_NOT_FOUND or MARKET_NOT_OPEN on a bad config. */
  async create(input: CreateContest): Promise<ContestDetail> {
    const nowMs = this.clock.nowMs();
    checkContestConfig(input, nowMs);
    const image = input.image === undefined ? null : decodeImage(input.image);
    const contestId = randomUUID();
    const marketIds = input.markets.map((m) => m.market_id);
    // Indexed before the write: a market resolution racing this create either commits first (then the create
    // fails: its market is no longer open) or finds this contest in the index after the create committed.
    this.index(contestId, marketIds);
    try {
      const contest = await this.lanes.run(
        contestId,
        async () => {
          const created = await this.store.transact(() => this.createInTxn(contestId, input, image, nowMs));
          // Committed: listed from now on. Still on the lane, so no task of the contest can run before this.
          this.listIndex.add(created);
          return created;
        },
        false,
      );
      return detailView(contest, this.marketOf, null);
    } catch (err) {
      this.unindex(contestId, marketIds);
      throw err;
    }
  }

  /**
   * Refunds every entry (in batches; answers once all are refunded). Voiding a voided contest answers it
   * unchanged; a resolved one, or one whose resolution has begun paying, is CONTEST_CLOSED.
   */
  async voidContest(contestId: string): Promise<ContestDetail> {
    // Read outside a transaction: on its lane this task is the contest's only writer until it ends.
    const contest = await this.lanes.run(
      contestId,
      async () => {
        const current = this.contests.get(contestId);
        if (current === undefined) throw new ApiError('CONTEST_NOT_FOUND');
        if (current.status === 'voided') return current;
        if (current.status === 'resolved') throw new ApiError('CONTEST_CLOSED', 'contest is resolved and can no longer be voided');
        if (current.settling?.kind === 'resolve') throw new ApiError('CONTEST_CLOSED', 'contest is being resolved and can no longer be voided');
        return this.settle(current, 'void');
      },
      false,
    );
    this.unindexContest(contest);
    this.log.info({ contestId, entries: contest.entriesFilled }, 'contest voided');
    return detailView(contest, this.marketOf, null);
  }

  /**
   * One page of a contest's entries of any game_type, with their owners (an operator's view), in key order
   * (user id, then entry_index): at most `limit` entries strictly after `afterKey` (the previous page's
   * nextKey; null: from the first), so a page costs limit + 2 reads however many entries the contest holds
   * (up to entry_cap = 1,000,000). `afterKey` is a thunk, called once the contest is found: an unknown
   * contest is CONTEST_NOT_FOUND whatever cursor came with it (the route decodes the cursor in it).
   */
  adminEntries(contestId: string, page: { limit: number; afterKey: () => string | null }): AdminEntriesPage {
    assert.ok(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= MAX_ADMIN_ENTRIES_PAGE, `admin entries limit ${page.limit}`);
    if (this.contests.get(contestId) === undefined) throw new ApiError('CONTEST_NOT_FOUND');
    const afterKey = page.afterKey();
    assert.ok(afterKey === null || isEntryKeyOf(contestId, afterKey), `admin entries of ${contestId} after ${afterKey}`);
    const entries: AdminEntry[] = [];
    let lastKey: string | null = null;
    // One entry past the page says whether another follows.
    for (const { key, value } of contestEntriesAfter(this.entries, contestId, afterKey, page.limit + 1)) {
      if (entries.length === page.limit) return { entries, nextKey: lastKey };
      entries.push({ user_id: value.userId, ...callerEntryView(value, this.marketOf) });
      lastKey = key;
    }
    return { entries, nextKey: null };
  }

  // ---- reads ----

  /**
   * One page of the list, newest first (createdAtMs, then seq, descending), strictly after `after` (the last
   * contest of the previous page; null: from the newest); an absent (undefined) status or category filters
   * nothing. `next` is the position of the page's last contest when another contest that the index says
   * matches follows it, else null. Filters on the in-memory index and reads only the records it returns, so
   * a page costs at most `limit` (≤ 100) record reads, plus one per contest settling at that moment,
   * whatever the number of contests, and a walk of the index from the cursor's place (a binary search) up
   * to the first contest past the page (~2 ns an entry; the whole index, ~20 µs at 10,000 contests, when
   * fewer than `limit` match). Summaries come from the records, so entries_filled and total_pot_micros are
   * as last committed. Measured: 0.012 ms at limit 10 over 20,000 contests, where reading every record
   * took 39 ms (docs/contests.md "The list").
   *
   * Walking every page while contests are created repeats nothing and skips nothing that existed when the
   * walk began: positions are unique and fixed at creation, and a new contest sorts before the cursor (it
   * is newer), except after a clock step back, when it may land in a later page: it is then listed once.
   */
  list(filter: ListFilter, page: { limit?: number | undefined; after?: ListPosition | null | undefined } = {}): ContestPage {
    const limit = page.limit ?? DEFAULT_LIST_LIMIT;
    assert.ok(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIST_LIMIT, `list limit ${limit}`);
    const contests: ContestSummary[] = [];
    let last: ListEntry | null = null;
    let next: ListPosition | null = null;
    this.listIndex.walkNewestFirst((entry) => {
      if (filter.category !== undefined && entry.category !== filter.category) return true;
      const isSettling = entry.pendingStatus !== null;
      if (filter.status !== undefined && !isSettling && entry.status !== filter.status) return true;
      if (contests.length === limit) {
        // The index says another contest matches (a settling one only may not, by its record: then the
        // next page is empty, which a client following next_cursor handles like any last page).
        next = { createdAtMs: last!.createdAtMs, seq: last!.seq };
        return false;
      }
      const contest = this.contests.get(entry.contestId);
      assert.ok(contest !== undefined, `listed contest ${entry.contestId} has no record`);
      assert.equal(contest.category, entry.category, `contest ${entry.contestId}: category differs from the list index`);
      if (isSettling) {
        // Its final batch may have committed before the settlement's continuation updated the entry: the
        // record decides, and it can only hold the status before or the one the settlement writes.
        assert.ok(contest.status === entry.status || contest.status === entry.pendingStatus, `settling contest ${entry.contestId} is ${contest.status}`);
        if (filter.status !== undefined && contest.status !== filter.status) return true;
      } else {
        // A status change that did not go through settle() (the only writer of a status) would show here.
        assert.equal(contest.status, entry.status, `contest ${entry.contestId}: the list index missed a status change`);
      }
      contests.push(summaryView(contest));
      last = entry;
      return true;
    }, page.after ?? null);
    return { contests, next };
  }

  /** Changes whenever a summary in the list may have changed (see #listVersion). */
  get listVersion(): number {
    return this.#listVersion;
  }

  /** Interface: lineups and outcast only; survivor and streak are CONTEST_NOT_FOUND like an unknown id. */
  detail(contestId: string, caller: UserPrincipal | null): ContestDetail {
    const contest = this.contests.get(contestId);
    if (contest === undefined || contest.gameType === 'survivor' || contest.gameType === 'streak') {
      throw new ApiError('CONTEST_NOT_FOUND');
    }
    const section = caller === null ? null : callerView(this.userEntries(contestId, caller.userId), this.marketOf);
    return detailView(contest, this.marketOf, section);
  }

  image(contestId: string): ServedImage {
    const contest = this.contests.get(contestId);
    if (contest === undefined) throw new ApiError('CONTEST_NOT_FOUND');
    if (!contest.hasImage) return defaultImage(contest.category);
    const stored = this.images.get(contestId);
    assert.ok(stored !== undefined, `image of contest ${contestId} is missing`);
    return stored;
  }

  // ---- entry ----

  /** Contract section 8. Durable (entry, reservation and count together) before it resolves. */
  enter(userId: string, request: ContestEntryRequest): Promise<EntryAccepted> {
    return this.lanes.run(request.contest_id, async () => {
      const replay = this.replayOf(userId, request);
      if (replay !== null) return replay;
      const decided = this.decideEntry(userId, request, this.clock.nowMs());
      await decided.write();
      return decided.accepted;
    });
  }

  /**
   * Contract section 13: an entry's idempotency key seen before answers that entry again (200), whatever has
   * happened to the contest since, or 409 IDEMPOTENCY_CONFLICT for other content. Racing retries of one key
   * on one contest are serialized by its lane; on two contests, the user's shard refuses the second key
   * record in its transaction (the 'reserve' op's uniqueKeys).
   */
  private replayOf(userId: string, request: ContestEntryRequest): EntryAccepted | null {
    if (request.idempotency_key === undefined) return null;
    const record = this.entryKeys.get(entryKeyRecordKey(userId, request.idempotency_key));
    if (record === undefined) return null;
    if (record.contentHash !== entryContentHash(request)) throw new ApiError('IDEMPOTENCY_CONFLICT');
    return { status: 200, body: { contest_id: record.contestId, entry_index: record.entryIndex, reserved_micros: record.reservedMicros } };
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
    const { start, end } = userEntryRange(contestId, userId);
    for (const { value } of this.entries.getRange({ start: end, end: start, reverse: true, limit: 1 })) return value.entryIndex + 1;
    return 0;
  }

  /** On the contest's lane. Throws the contract error that refuses the entry, or returns it and its write. */
  private decideEntry(userId: string, request: ContestEntryRequest, nowMs: number): { accepted: EntryAccepted; write: () => Promise<unknown> } {
    const contest = this.contests.get(request.contest_id);
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
    const key = entryKey(contest.contestId, userId, entryIndex);
    assert.equal(this.entries.get(key), undefined, `entry ${key} exists already`);
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
          writes: [
            { db: 'contestEntries', key, value: entry },
            { db: 'contests', key: contest.contestId, value: updated },
            { db: 'userEntries', key: userEntryKey(userId, nowMs, contest.contestId, entryIndex), value: true },
            ...(keyed === null ? [] : [{ db: 'entryKeys' as const, key: keyed.key, value: keyed.record }]),
          ],
          uniqueKeys: keyed === null ? [] : [{ db: 'entryKeys', key: keyed.key }],
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
  ): { accepted: EntryAccepted; write: () => Promise<unknown> } {
    if (contest.gameType !== 'survivor' && contest.gameType !== 'streak') {
      throw new ApiError('ENTRY_NOT_FOUND', `${contest.gameType} entries cannot be continued; omit entry_index`);
    }
    const key = entryKey(contest.contestId, userId, entryIndex);
    const entry = this.entries.get(key);
    if (entry === undefined) throw new ApiError('ENTRY_NOT_FOUND', `you have no entry ${entryIndex} in this contest`);
    if (isEliminated(entryOutcomes(entry, this.marketOf))) throw new ApiError('ENTRY_ELIMINATED');
    checkPicks(contest, request.bets, entry.picks, this.marketOf, nowMs);
    const picks = [...entry.picks, ...request.bets.map((b) => ({ marketId: b.market_id, direction: b.direction }))];
    return {
      accepted: { status: 200, body: { contest_id: contest.contestId, entry_index: entryIndex, reserved_micros: '0' } },
      write: () => {
        const keyed = this.keyRecordOf(userId, request, entryIndex, '0');
        return this.store.transact(() => {
          // Inside the transaction: a new entry's key is written by a shard, and LMDB orders the two.
          if (keyed !== null && this.entryKeys.get(keyed.key) !== undefined) throw new ApiError('IDEMPOTENCY_CONFLICT');
          void this.entries.put(key, { ...entry, picks });
          if (keyed !== null) void this.entryKeys.put(keyed.key, keyed.record);
        });
      },
    };
  }

  // ---- resolution ----

  /**
   * At start, before the port opens: indexes the open contests and queues a finish on each one's lane, which
   * settles those whose markets all became final while the process was down (or crashed between a market's
   * resolution and the contest's) and continues a settlement a crash cut short. Everything is queued before
   * the first await, so any later task of such a contest (an entry, a void) runs after its finish. The caller
   * need not wait for the promise: a settlement takes ~21 s at 1,000,000 entries, and the service can serve
   * meanwhile (batches, settlement.ts). It never rejects; a finish that fails is logged, and a same-outcome
   * resolve of one of its markets or the next start continues it.
   */
  async recover(): Promise<{ open: number; finished: number }> {
    const open: string[] = [];
    // The list index (built by the constructor) knows which contests are open: only their records are read.
    this.listIndex.walkNewestFirst((entry) => {
      if (entry.status !== 'open') return true;
      const contest = this.contests.get(entry.contestId);
      assert.ok(contest !== undefined && contest.status === 'open', `open contest ${entry.contestId} is ${contest?.status ?? 'missing'}`);
      open.push(contest.contestId);
      this.index(contest.contestId, contest.markets.map((m) => m.marketId));
      return true;
    });
    const outcomes = await Promise.allSettled(open.map((contestId) => this.finishIfFinal(contestId)));
    let finished = 0;
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') {
        if (outcome.value !== null && outcome.value.status !== 'open') finished++;
        return;
      }
      this.logSettlementFailure(outcome.reason, open[i]!, null);
    });
    this.log.info({ open: open.length - finished, finished }, 'contests recovered');
    return { open: open.length - finished, finished };
  }

  /**
   * At stop, before the store closes: a settlement in progress stops after its current batch (its progress
   * is durable; the next start's recover() continues it), and every lane's task ends.
   */
  async stop(): Promise<void> {
    this.isStopping = true;
    await this.lanes.drain();
  }

  /**
   * Finishes every open contest of the market. A contest whose settlement fails does not keep the others
   * from settling; the failures are thrown afterwards, so the resolve answers 500 and the operator's
   * same-outcome retry (which re-runs this, markets.ts) continues each failed settlement from its last batch.
   */
  private async onMarketResolved(market: Market): Promise<void> {
    const failures: unknown[] = [];
    for (const contestId of [...(this.openByMarket.get(market.market_id) ?? [])]) {
      try {
        await this.finishIfFinal(contestId);
      } catch (err) {
        this.logSettlementFailure(err, contestId, market.market_id);
        failures.push(err);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} contest settlement(s) of market ${market.market_id} failed`);
  }

  /** A settlement that stopped: an interrupt by the stop is expected, a broken invariant stops the process. */
  private logSettlementFailure(err: unknown, contestId: string, marketId: number | null): void {
    if (err instanceof SettlementInterrupted) {
      this.log.info({ contestId, marketId, detail: err.message }, 'contest settlement stopped with the service; the next start continues it');
      return;
    }
    this.log.error({ err, contestId, marketId }, 'contest settlement failed; a same-outcome resolve or the next start continues it');
    // A broken money invariant is a bug: stop rather than carry on with wrong balances (STYLE).
    if (err instanceof AssertionError) setImmediate(() => { throw err; });
  }

  /**
   * Resolves (or voids, when every market voided) a contest whose markets are all final, and finishes a
   * settlement that a crash cut short. Idempotent. A finish still waiting on the contest's lane is shared,
   * not queued again: it reads the state when it starts, so it covers this call too, and retried resolves
   * during a long settlement (~21 s at 1,000,000 entries) add nothing to the lane.
   */
  private finishIfFinal(contestId: string): Promise<ContestRecord | null> {
    const waiting = this.waitingFinishes.get(contestId);
    if (waiting !== undefined) return waiting;
    const finish = this.lanes
      .run(
        contestId,
        () => {
          this.waitingFinishes.delete(contestId);
          return this.finishOnLane(contestId);
        },
        false,
      )
      .then((contest) => {
        if (contest !== null && contest.status !== 'open') {
          this.unindexContest(contest);
          this.log.info({ contestId, status: contest.status, paidMicros: contest.paidMicros }, 'contest finished');
        }
        return contest;
      });
    this.waitingFinishes.set(contestId, finish);
    return finish;
  }

  /** On the contest's lane, its only writer while this runs: reads need no transaction of their own. */
  private async finishOnLane(contestId: string): Promise<ContestRecord | null> {
    const contest = this.contests.get(contestId);
    if (contest === undefined || contest.status !== 'open') return contest ?? null;
    const kind = contest.settling?.kind ?? this.settlementDue(contest);
    if (kind === null) return contest;
    if (contest.settling !== undefined) {
      this.log.info({ contestId, kind, settled: contest.settling.settledCount, entries: contest.entriesFilled }, 'contest settlement continues');
    }
    return this.settle(contest, kind);
  }

  /**
   * On the contest's lane: every status change of a contest goes through here (its settlement's final batch
   * writes 'resolved' or 'voided'). The list index follows once no transaction of the settlement is in
   * flight, from the record as LMDB then holds it: a settlement can end with a throw after its final batch
   * committed (SettlerOptions.afterBatch), or before (a failed batch, a stop), so the outcome alone would not say.
   */
  private async settle(contest: ContestRecord, kind: SettlementKind): Promise<ContestRecord> {
    this.listIndex.beginSettling(contest.contestId, kind === 'void' ? 'voided' : 'resolved');
    let settled: ContestRecord | null = null;
    try {
      settled = await this.settler.settle(contest, kind, this.clock.nowMs());
      return settled;
    } finally {
      // A finished settlement returns the record its final batch wrote; after a throw, LMDB says (every
      // transaction of the settlement has resolved by now, and lmdb-js renews this thread's reads on each).
      const committed = settled ?? this.contests.get(contest.contestId);
      assert.ok(committed !== undefined, `contest ${contest.contestId} vanished during its settlement`);
      this.listIndex.endSettling(contest.contestId, committed.status);
    }
  }

  /** null while a contest market is OPEN; 'void' when every one voided (nothing was decided); else 'resolve'. */
  private settlementDue(contest: ContestRecord): SettlementKind | null {
    const markets = contest.markets.map((m) => this.markets.get(m.marketId));
    if (markets.some((m) => m === undefined || m.status === 'OPEN')) return null;
    return markets.every((m) => m!.status === 'VOIDED') ? 'void' : 'resolve';
  }

  // ---- helpers ----

  private createInTxn(contestId: string, input: CreateContest, image: ImageRecord | null, nowMs: number): ContestRecord {
    for (const { market_id: marketId } of input.markets) {
      const market = this.markets.get(marketId);
      if (market === undefined) throw new ApiError('MARKET_NOT_FOUND', `market ${marketId} does not exist`);
      if (!isOpenForBetting(market, nowMs)) throw new ApiError('MARKET_NOT_OPEN', `market ${marketId} is not open for betting`);
    }
    const contest: ContestRecord = {
      contestId,
      seq: nextCounterInTxn(this.store, 'contest'),
      title: input.title,
      category: input.category,
      status: 'open',
      betAmountMicros: input.bet_amount_micros,
      protocolPrizePoolMicros: input.protocol_prize_pool_micros,
      entryCap: input.entry_cap,
      entryOpensAtMs: input.entry_opens_at_ms ?? null,
      bettingClosesMs: input.betting_closes_ms,
      liveEndsAtMs: input.live_ends_at_ms ?? null,
      resolvedAtMs: null,
      createdAtMs: nowMs,
      description: input.description ?? null,
      betType: { kind: input.bet_type.kind, value: input.bet_type.value },
      gameType: input.game_type,
      winningSplitBps: [...(input.winning_split_bps ?? [])],
      markets: input.markets.map((m) => ({ marketId: m.market_id, category: m.category })),
      hasImage: image !== null,
      entriesFilled: 0,
      paidMicros: null,
    };
    // The prize pool leaves the protocol's available for committed in the contest's own transaction.
    if (!this.ledger.openPool(contestId, BigInt(input.protocol_prize_pool_micros), nowMs)) {
      throw new ApiError('INSUFFICIENT_BALANCE', 'the protocol account cannot fund this prize pool');
    }
    void this.contests.put(contestId, contest);
    if (image !== null) void this.images.put(contestId, image);
    return contest;
  }

  /** One user's entries in entry_index order (keys are zero-padded). */
  private userEntries(contestId: string, userId: string): EntryRecord[] {
    const out: EntryRecord[] = [];
    for (const { value } of this.entries.getRange(userEntryRange(contestId, userId))) out.push(value);
    return out;
  }

  private index(contestId: string, marketIds: readonly number[]): void {
    for (const marketId of marketIds) {
      let contests = this.openByMarket.get(marketId);
      if (contests === undefined) this.openByMarket.set(marketId, (contests = new Set()));
      contests.add(contestId);
    }
  }

  private unindex(contestId: string, marketIds: readonly number[]): void {
    for (const marketId of marketIds) {
      const contests = this.openByMarket.get(marketId);
      contests?.delete(contestId);
      if (contests?.size === 0) this.openByMarket.delete(marketId);
    }
  }

  private unindexContest(contest: ContestRecord): void {
    this.unindex(contest.contestId, contest.markets.map((m) => m.marketId));
  }
}

/** What an entry's idempotency key stands for: the contest, the entry continued (if any) and the picks. */
function entryContentHash(request: ContestEntryRequest): string {
  return hash('sha256', JSON.stringify([request.contest_id, request.entry_index ?? null, request.bets.map((b) => [b.market_id, b.direction])]));
}
