// Main thread. The contest actor (contract section 8, docs/contests.md): the one owner of contest state.
//
// Every change of a contest (creation, entry, continuation, resolution, void) is a task on that contest's
// serial lane (serial-queue.ts): it reads the durable state (the pool renews this thread's snapshot when a
// shard's answer arrives, shard-pool.ts refreshReads), decides with the pure rules (rules.ts,
// scoring.ts), and has everything the decision implies written in ONE transaction. A new entry moves money,
// which only the user's shard may decide (entries.ts): the shard writes the entry, its reservation and the
// contest's new entriesFilled together, or refuses and writes nothing. LMDB commits a transaction whole or
// not at all, so a kill -9 leaves either the entry with its reservation and its count, or none of them; the
// lane means two entries of one contest are never decided against the same state, so entry_cap cannot be
// overrun. Resolution and voiding are the exception: many transactions in bounded batches (resolution.ts,
// settlement.ts), still one task on the lane.
//
// This module holds the lanes and the list index and does the creations and entries; the parts it delegates
// to each have one job: entries.ts decides an entry, resolution.ts ends contests (markets resolved, admin
// void, recovery at start), queries.ts answers the reads, which need no lane.
//
// The public list (GET /v1/contests) walks an in-memory index of every contest's order and filter keys
// (list-index.ts), kept here after each committed creation and settlement, and reads only the records it
// returns: contests are never deleted, so reading them all per request grew without bound.
import { errors } from '../lib/errors.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { UserPrincipal } from '../contract/principal.js';
import type { Clock } from '../lib/clock.js';
import type { Ledger } from '../ledger/ledger.js';
import { PROTOCOL } from '../records/ledger.js';
import type { BalanceOwners } from '../ledger/owners.js';
import { isOpenForBetting } from '../markets/market-table.js';
import type { Markets } from '../markets/markets.js';
import type { Market } from '../contract/markets.js';
import type { ContestDetail, ContestEntryRequest, CreateContest } from '../contract/contests.js';
import { nextCounterInTxn } from '../store/counters.js';
import type { Store } from '../store/db.js';
import { ContestRecords } from './contest-records.js';
import { ContestEntries, type EntryAccepted } from './entries.js';
import { decodeImage, type ServedImage } from './images.js';
import { ContestListIndex, type ListPosition } from './list-index.js';
import { ContestQueries, type AdminEntriesPage, type ContestPage, type ListFilter } from './queries.js';
import type { ContestRecord, ImageRecord } from '../records/contests.js';
import { ContestResolution } from './resolution.js';
import { ContestOwners } from './contest-owners.js';
import { checkContestConfig } from './rules.js';
import { SerialQueues } from './serial-queue.js';
import type { SettlerOptions } from './settlement.js';
import { detailView } from './views.js';

/** Tasks waiting on one contest's lane before new ones are refused with 503 OVERLOADED. */
export const MAX_QUEUED_TASKS_PER_CONTEST = 4096;

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
  private readonly marketOf = (marketId: number): Market | undefined => this.markets.get(marketId);
  /**
   * Every contest's order and filter keys, newest first, so a list reads only the records it returns
   * (list-index.ts). Built here from one scan, so it is whole before anything can use it (recover(), a list,
   * a create, or a test that never calls recover()); changed only after the write it mirrors has committed.
   */
  private readonly listIndex: ContestListIndex;
  private readonly entries: ContestEntries;
  private readonly resolution: ContestResolution;
  private readonly queries: ContestQueries;
  private readonly records: ContestRecords;
  private readonly owners: ContestOwners;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    owners: BalanceOwners,
    private readonly markets: Markets,
    log: Logger,
    /** The main thread's ledger: a contest's prize pool is the protocol's money (contract section 11). */
    private readonly ledger: Ledger,
    options: ContestsOptions = {},
  ) {
    // One read of every record, once per start (~tens of ms after years of contests), instead of per list.
    // lmdb-js's lazy map: one record decoded at a time, never all of them held at once.
    this.records = new ContestRecords(store);
    this.owners = new ContestOwners(store, owners, log);
    this.listIndex = new ContestListIndex(this.records.allContests());
    this.entries = new ContestEntries(store, this.owners, this.marketOf);
    this.resolution = new ContestResolution(
      store,
      clock,
      markets,
      log,
      this.lanes,
      this.listIndex,
      this.owners,
      ledger,
      this.marketOf,
      options.settlement,
    );
    this.queries = new ContestQueries(store, this.listIndex, this.marketOf);
  }

  // ---- admin ----

  /** Durable before it resolves. VALIDATION_FAILED, MARKET_NOT_FOUND or MARKET_NOT_OPEN on a bad config. */
  async create(input: CreateContest): Promise<ContestDetail> {
    const nowMs = this.clock.nowMs();
    checkContestConfig(input, nowMs);
    const image = input.image === undefined ? null : decodeImage(input.image);
    const contestId = randomUUID();
    const marketIds = input.markets.map((m) => m.market_id);
    // Tracked before the write: a market resolution racing this create either commits first (then the create
    // fails: its market is no longer open) or finds this contest tracked after the create committed.
    this.resolution.track(contestId, marketIds);
    try {
      const contest = await this.lanes.run(
        contestId,
        async () => {
          const created =
            this.owners.engine === 'journal'
              ? await this.createWithOwnedPool(contestId, input, image, nowMs)
              : await this.store.transact(() => this.createInTxn(contestId, input, image, nowMs));
          // Committed: listed from now on. Still on the lane, so no task of the contest can run before this.
          this.listIndex.add(created);
          return created;
        },
        false,
      );
      return detailView(contest, this.marketOf, null);
    } catch (err) {
      this.resolution.untrack(contestId, marketIds);
      throw err;
    }
  }

  /**
   * Refunds every entry (in batches; answers once all are refunded). Voiding a voided contest answers it
   * unchanged; a resolved one, or one whose resolution has begun paying, is CONTEST_CLOSED.
   */
  async voidContest(contestId: string): Promise<ContestDetail> {
    return detailView(await this.resolution.voidContest(contestId), this.marketOf, null);
  }

  /** One page of a contest's entries with their owners (queries.ts adminEntries). */
  adminEntries(contestId: string, page: { limit: number; afterKey: () => string | null }): AdminEntriesPage {
    return this.queries.adminEntries(contestId, page);
  }

  // ---- reads (queries.ts; no lane) ----

  /** One page of the list, newest first (queries.ts list). */
  list(filter: ListFilter, page: { limit?: number | undefined; after?: ListPosition | null | undefined } = {}): ContestPage {
    return this.queries.list(filter, page);
  }

  /** Changes whenever a summary in the list may have changed (see #listVersion). */
  get listVersion(): number {
    return this.#listVersion;
  }

  /** Interface: lineups and outcast only; survivor and streak are CONTEST_NOT_FOUND like an unknown id. */
  detail(contestId: string, caller: UserPrincipal | null): ContestDetail {
    return this.queries.detail(contestId, caller);
  }

  image(contestId: string): ServedImage {
    return this.queries.image(contestId);
  }

  // ---- entry ----

  /** Contract section 8. Durable (entry, reservation and count together) before it resolves. */
  enter(userId: string, request: ContestEntryRequest): Promise<EntryAccepted> {
    return this.lanes.run(request.contest_id, async () => {
      await this.owners.settleDoubtsOf(request.contest_id); // before the contest's count and entries are read
      const replay = this.entries.replayOf(userId, request);
      if (replay !== null) return replay;
      const decided = this.entries.decide(userId, request, this.clock.nowMs());
      await decided.write();
      return decided.accepted;
    });
  }

  // ---- start and stop ----

  /** At start, before the port opens: tracks the open contests and finishes those due (resolution.ts recover). */
  async recover(): Promise<{ open: number; finished: number }> {
    // Its finishes are queued on their lanes before its first await (the header of app.ts's resolution area).
    const recovered = this.resolution.recover();
    // A cluster's calls whose answers a crash lost: each entry's on its lane, and the contests whose pools
    // turned out open, listed and tracked now as a create would have.
    for (const contest of await this.owners.settleEveryDoubt((contestId, task) => this.lanes.run(contestId, task, false))) {
      this.listIndex.add(contest);
      this.resolution.adopt(contest);
    }
    return recovered;
  }

  /**
   * At stop, before the store closes: a settlement in progress stops after its current batch (its progress
   * is durable; the next start's recover() continues it), and every lane's task ends.
   */
  async stop(): Promise<void> {
    this.resolution.stop();
    await this.lanes.drain();
  }

  /**
   * The journal engine: the pool is opened by the protocol's owner shard with the contest's record, so both are
   * durable or neither; the record is checked and numbered first, and its image written beside it (and
   * removed again if the protocol cannot fund the pool).
   */
  private async createWithOwnedPool(contestId: string, input: CreateContest, image: ImageRecord | null, nowMs: number) {
    const contest = await this.store.transact(() => {
      const checked = this.checkedContest(contestId, input, image, nowMs);
      if (image !== null) this.records.putImage(contestId, image);
      return checked;
    });
    const call = { op: 'open_pool', contestId, amountMicros: BigInt(input.protocol_prize_pool_micros) } as const;
    const answer = await this.owners.ownerCall(this.owners.shardOfAccount(PROTOCOL), call, [this.records.contestWrite(contest)]);
    if (answer.ok) return contest;
    if (image !== null) await this.store.transact(() => this.records.removeImage(contestId));
    throw errors.prizePoolUnfunded();
  }

  private createInTxn(contestId: string, input: CreateContest, image: ImageRecord | null, nowMs: number): ContestRecord {
    const contest = this.checkedContest(contestId, input, image, nowMs);
    // The prize pool leaves the protocol's available for committed in the contest's own transaction.
    if (!this.ledger.openPool(contestId, BigInt(input.protocol_prize_pool_micros), nowMs)) throw errors.prizePoolUnfunded();
    this.records.putContest(contest);
    if (image !== null) this.records.putImage(contestId, image);
    return contest;
  }

  /** The new contest's record, inside a transaction: its markets open now, its number the next. */
  private checkedContest(contestId: string, input: CreateContest, image: ImageRecord | null, nowMs: number): ContestRecord {
    for (const { market_id: marketId } of input.markets) {
      const market = this.markets.get(marketId);
      if (market === undefined) throw errors.marketNotFound(marketId);
      if (!isOpenForBetting(market, nowMs)) throw errors.marketNotOpen(marketId);
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
    return contest;
  }
}
