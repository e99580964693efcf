// Main thread, part of the contest actor (contests.ts), whose lanes and list index it is given: how a contest
// ends. Resolution is driven by market resolutions (Markets.onResolved) and, at start, by recover(), which
// finishes any contest whose markets all became final, or whose settlement was cut short, while the process
// was down or crashing. Both go through the same idempotent task, so running it twice changes nothing. A void
// is the admin's word instead of the markets'; it settles the same way, refunding every stake.
//
// Resolution and voiding settle every entry, up to entry_cap = 1,000,000, so each is one task on the
// contest's lane but many transactions, in bounded batches (settlement.ts), each durable with its progress,
// so the main thread is never held for long and a crash between batches is finished by recover().
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { ApiError, errors } from '../lib/errors.js';
import { isOverloaded, OverloadRetries } from '../lib/overload-retries.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ContestOwners } from './contest-owners.js';
import type { Markets } from '../markets/markets.js';
import type { Market } from '../contract/markets.js';
import type { Store } from '../store/db.js';
import { ContestRecords } from './contest-records.js';
import type { ContestListIndex } from './list-index.js';
import type { ContestRecord } from '../records/contests.js';
import type { SerialQueues } from './serial-queue.js';
import type { SettlementKind } from './settlement-plans.js';
import { ContestSettler, SettlementInterrupted, type SettlerOptions } from './settlement.js';
import type { MarketOf } from '../contract/markets.js';
import { crashOnBrokenInvariant } from '../lib/fatal.js';

export class ContestResolution {
  /** Open contests by market id: the contests a market resolution may finish. In memory, rebuilt by recover(). */
  private readonly openByMarket = new Map<number, Set<string>>();
  /** Finishes queued on a contest's lane and not yet started, by contest id (finishIfFinal). */
  private readonly waitingFinishes = new Map<string, Promise<ContestRecord | null>>();
  /** Contests whose settlement a full store refused, continued in the background (retryFinish), by id. */
  private readonly retries = new OverloadRetries<string>();
  private readonly settler: ContestSettler;
  private readonly contests: ContestRecords;
  private isStopping = false;

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly markets: Markets,
    private readonly log: Logger,
    /** The actor's lanes: every finish and void is a task on its contest's lane. */
    private readonly lanes: SerialQueues,
    /** The actor's list index, told of each status change once it has committed. */
    private readonly listIndex: ContestListIndex,
    private readonly owners: ContestOwners,
    ledger: Ledger,
    marketOf: MarketOf,
    settlerOptions: SettlerOptions | undefined,
  ) {
    this.settler = new ContestSettler(store, owners, ledger, marketOf, () => this.isStopping, settlerOptions);
    this.contests = new ContestRecords(store);
    markets.onResolved((market) => this.onMarketResolved(market));
  }

  /**
   * At start, before the port opens: indexes the open contests and queues a finish on each one's lane, which
   * settles those whose markets all became final while the process was down (or crashed between a market's
   * resolution and the contest's) and continues a settlement a crash cut short. Everything is queued before
   * the first await, so any later task of such a contest (an entry, a void) runs after its finish. The caller
   * need not wait for the promise: a settlement takes ~21 s at 1,000,000 entries, and the service can serve
   * meanwhile (batches, settlement.ts). It never rejects; a finish that fails is logged, and a same-outcome
   * resolve of one of its markets or the next start continues it (one refused for want of room, at once
   * once there is room: retryFinish).
   */
  async recover(): Promise<{ open: number; finished: number }> {
    const open: string[] = [];
    // The list index (built by the actor's constructor) knows which contests are open: only their records are read.
    this.listIndex.walkNewestFirst((entry) => {
      if (entry.status !== 'open') return true;
      const contest = this.contests.contest(entry.contestId);
      assert.ok(contest !== undefined && contest.status === 'open', `open contest ${entry.contestId} is ${contest?.status ?? 'missing'}`);
      open.push(contest.contestId);
      this.track(
        contest.contestId,
        contest.markets.map((m) => m.marketId),
      );
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
      if (isOverloaded(outcome.reason)) this.retryFinish(open[i]!);
    });
    this.log.info({ open: open.length - finished, finished }, 'contests recovered');
    return { open: open.length - finished, finished };
  }

  /** At stop: a settlement in progress stops after its current batch (its progress is durable). */
  stop(): void {
    this.isStopping = true;
    this.retries.stop();
  }

  /**
   * Refunds every entry (in batches; resolves once all are refunded) and returns the voided record. Voiding a
   * voided contest returns it unchanged, and one whose void was cut short (a crash, a failed batch) continues
   * it; a resolved one, or one whose resolution has begun, is CONTEST_CLOSED.
   */
  async voidContest(contestId: string): Promise<ContestRecord> {
    // Read outside a transaction: on its lane this task is the contest's only writer until it ends.
    const contest = await this.lanes
      .run(
        contestId,
        async () => {
          await this.owners.settleDoubtsOf(contestId); // its last entry's stake, if its answer was lost
          const current = this.contests.contest(contestId);
          if (current === undefined) throw new ApiError('CONTEST_NOT_FOUND');
          if (current.status === 'voided') return current;
          if (current.status === 'resolved') throw errors.contestResolvedCannotVoid();
          if (current.settling?.kind === 'resolve') throw errors.contestResolvingCannotVoid();
          return this.settle(current, 'void');
        },
        false,
      )
      .catch((err: unknown) => {
        // A batch refused for want of room, its decision durable: work already accepted, continued once there
        // is room without waiting for the admin's retry (a refused decision leaves nothing to continue).
        if (isOverloaded(err)) this.retryFinish(contestId);
        throw err;
      });
    this.untrackContest(contest);
    this.log.info({ contestId, entries: contest.entriesFilled }, 'contest voided');
    return contest;
  }

  /** Makes an open contest one that its markets' resolutions finish. */
  track(contestId: string, marketIds: readonly number[]): void {
    for (const marketId of marketIds) {
      let contests = this.openByMarket.get(marketId);
      if (contests === undefined) this.openByMarket.set(marketId, (contests = new Set()));
      contests.add(contestId);
    }
  }

  /** A contest that came to be after recover() read the open ones: tracked, and finished if already due. */
  adopt(contest: ContestRecord): void {
    this.track(
      contest.contestId,
      contest.markets.map((m) => m.marketId),
    );
    this.finishIfFinal(contest.contestId).catch((err: unknown) => {
      this.logSettlementFailure(err, contest.contestId, null);
      if (isOverloaded(err)) this.retryFinish(contest.contestId);
    });
  }

  /** Undoes track(): the contest is finished, or was never created. */
  untrack(contestId: string, marketIds: readonly number[]): void {
    for (const marketId of marketIds) {
      const contests = this.openByMarket.get(marketId);
      contests?.delete(contestId);
      if (contests?.size === 0) this.openByMarket.delete(marketId);
    }
  }

  private untrackContest(contest: ContestRecord): void {
    this.untrack(
      contest.contestId,
      contest.markets.map((m) => m.marketId),
    );
  }

  /**
   * Finishes every open contest of the market. A contest whose settlement fails does not keep the others
   * from settling; the failures are thrown afterwards, so the resolve answers 500 and the operator's
   * same-outcome retry (which re-runs this, markets/resolution.ts) continues each failed settlement from its
   * last batch.
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
    if (failures.length > 0)
      throw new AggregateError(failures, `${failures.length} contest settlement(s) of market ${market.market_id} failed`);
  }

  /**
   * Continues the contest's settlement (finishIfFinal, idempotent) after 1 s doubling to 30 s, until it
   * succeeds, the service stops, or it fails otherwise (logged; then a retried void or resolve, or the next
   * start, continues it). A resolution's own retries are the market's (Markets, its listeners' retries).
   */
  private retryFinish(contestId: string): void {
    this.retries.retry(
      contestId,
      () => this.finishIfFinal(contestId),
      (err) => this.logSettlementFailure(err, contestId, null),
    );
  }

  /** A settlement that stopped: an interrupt by the stop is expected, a broken invariant stops the process. */
  private logSettlementFailure(err: unknown, contestId: string, marketId: number | null): void {
    if (err instanceof SettlementInterrupted) {
      this.log.info(
        { contestId, marketId, detail: err.message },
        'contest settlement stopped with the service; the next start continues it',
      );
      return;
    }
    this.log.error({ err, contestId, marketId }, 'contest settlement failed; a same-outcome resolve or the next start continues it');
    crashOnBrokenInvariant(err);
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
          this.untrackContest(contest);
          this.log.info({ contestId, status: contest.status, paidMicros: contest.paidMicros }, 'contest finished');
        }
        return contest;
      });
    this.waitingFinishes.set(contestId, finish);
    return finish;
  }

  /** On the contest's lane, its only writer while this runs: reads need no transaction of their own. */
  private async finishOnLane(contestId: string): Promise<ContestRecord | null> {
    await this.owners.settleDoubtsOf(contestId); // every entry's stake known before any is settled
    const contest = this.contests.contest(contestId);
    if (contest === undefined || contest.status !== 'open') return contest ?? null;
    const kind = contest.settling?.kind ?? this.voidCutBeforeItsDecision(contest) ?? this.settlementDue(contest);
    if (kind === null) return contest;
    if (contest.settling !== undefined) {
      this.log.info(
        { contestId, kind, settled: contest.settling.settledCount, entries: contest.entriesFilled },
        'contest settlement continues',
      );
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
      const committed = settled ?? this.contests.contest(contest.contestId);
      assert.ok(committed !== undefined, `contest ${contest.contestId} vanished during its settlement`);
      this.listIndex.endSettling(contest.contestId, committed.status);
    }
  }

  /**
   * 'void' for a void that an earlier version cut after its first refunds and before its first progress
   * record (that version wrote the decision with the first batch's progress, settlement.ts now writes it
   * first): its first entry in key order is settled though no settlement is recorded. Nothing else settles
   * an entry without a `settling` record, so this is that void, and it continues as one; left to its
   * markets' resolution, it would meet its refunded entries and stop the process at every start.
   */
  private voidCutBeforeItsDecision(contest: ContestRecord): 'void' | null {
    const [first] = this.contests.entriesAfter(contest.contestId, null, 1);
    return first !== undefined && first.value.settlement !== null ? 'void' : null;
  }

  /** null while a contest market is OPEN; 'void' when every one voided (nothing was decided); else 'resolve'. */
  private settlementDue(contest: ContestRecord): SettlementKind | null {
    const markets = contest.markets.map((m) => this.markets.get(m.marketId));
    if (markets.some((m) => m === undefined || m.status === 'OPEN')) return null;
    return markets.every((m) => m!.status === 'VOIDED') ? 'void' : 'resolve';
  }
}
