// Main thread, on the contest's serial lane. Settles every entry of a contest that resolves or is voided
// (contract section 8, docs/contests.md "Resolution in batches"), in bounded batches so that the main thread,
// which also serves HTTP and the makers' sockets, is never held for long. entry_cap goes up to 1,000,000:
// settling them in one transaction held the main thread (and LMDB's single writer lock, which the RFQ shards
// need too) for 16-17 ms per 1,000 entries: 1.7 s at 100k, 31.5 s at 1,000,000 (measured, docs/contests.md).
//
// 0. Decide: before any money moves, the `settling` record with the decision (kind, atMs) and nothing done
//    yet is written. From then on the contest is closed to entries and to the other decision (a void to a
//    resolution's, the markets' to a void), and whatever finishes it continues this settlement.
// 1. Score (resolution only): read the entries page by page, yielding between pages, and keep one score key
//    per entry (settlement-plans.ts, with scoring.ts): one byte per entry instead of every record at once.
// 2. Collect (resolution only): every entry's reserved stake joins the contest's pot (the protocol's
//    committed bucket, held under `contest:<id>:pool`, which the prize pool opened at creation). A sweep of
//    its own, before any prize is paid, so the pot never pays out what it has not received yet, whichever
//    shard settles first.
// 3. Settle: a batch of `batchEntries` entries in key order at a time. The entries' money belongs to their
//    users' shards (ledger.ts), so each shard gets its users' part of the batch (BalanceOwners.moveMoney
//    'settle_entries') and pays (or refunds) each entry and writes the settled entry in one transaction;
//    then this thread writes the contest's `settling` progress record (records.ts), or, after the last batch,
//    the final status with what the contest did not pay returned to the protocol's available. Between
//    batches the event loop turns.
//
// Why a crash is safe anywhere: each entry's money and its settled record commit together; an entry's hold
// (ledger.ts) is the proof that its stake was not collected (or refunded) yet, and its settled record that
// it was not paid, so a shard never moves an entry's money twice. The durable
// progress says "entries up to settling.lastKey settled"; entries after it may be settled too (a crash came
// between the shards' commits and the progress), and the next start's recover() (resolution.ts), continuing
// from lastKey with the decision recorded in `settling` (kind, atMs), finds them settled exactly as it would
// settle them and moves nothing for them. Scores come out the same because the entry set is frozen: an entry
// or a continuation needs its markets OPEN, resolution starts only when none is, a market never reopens, and
// checkEntryWindow refuses a contest that is settling.
import assert, { AssertionError } from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { overloaded } from '../lib/errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { BalanceOwners } from '../ledger/owners.js';
import { PROTOCOL } from '../records/ledger.js';
import type { EntrySettlement as EntryMoney } from '../ledger/money-ops.js';
import type { Store } from '../store/db.js';
import { ContestRecords, settledEntryWrite } from './contest-records.js';
import { entryRef, type ContestRecord, type SettlingRecord } from '../records/contests.js';
import { resolvePlan, voidPlan, type SettlementKind, type SettlementPlan } from './settlement-plans.js';
import { totalPotMicros } from './views.js';
import type { MarketOf } from '../contract/markets.js';

/**
 * Entries per settlement batch. Settling one entry cost ~8-10 µs when the main thread wrote it (its ledger
 * movement with the journal entry, the entry rewritten; measured, docs/contests.md), so a batch of 256 holds
 * a thread and LMDB's writer lock ~2-3 ms: inside the RFQ p99 budget of 10 ms (docs/performance.md). The
 * money and the entries are now written by the users' shards (one transaction per shard per batch, in the
 * shard's group commit alongside its RFQs), and this thread writes only the progress record.
 */
export const SETTLE_BATCH_ENTRIES = 256;

/** Reported after each committed batch (tests, and anything that wants to watch a long settlement). */
export interface SettleProgress {
  contestId: string;
  kind: SettlementKind;
  settledCount: number;
  entryCount: number;
  isFinished: boolean;
}

/** A pool refused POOL_SHORT (stakes collected on other shards still on their way) is asked again this much later. */
const POOL_SHORT_RETRY_MS = 10;
const POOL_SHORT_TRIES = 500;

export interface SettlerOptions {
  batchEntries?: number;
  /**
   * Called after each batch has committed. A throw stops the settlement right there, which is exactly the
   * state a crash between two batches leaves (tests use it to produce that state through this code path).
   */
  afterBatch?: (progress: SettleProgress) => void | Promise<void>;
}

export class ContestSettler {
  private readonly batchEntries: number;
  private readonly afterBatch: SettlerOptions['afterBatch'];
  private readonly records: ContestRecords;

  constructor(
    private readonly store: Store,
    private readonly owners: BalanceOwners,
    /** The main thread's ledger: the contest's pool, closed with the final record. */
    private readonly ledger: Ledger,
    private readonly marketOf: MarketOf,
    /** True once the service stops: a settlement ends after its current batch, for the next start to continue. */
    private readonly isStopping: () => boolean,
    options: SettlerOptions = {},
  ) {
    this.batchEntries = options.batchEntries ?? SETTLE_BATCH_ENTRIES;
    assert.ok(Number.isSafeInteger(this.batchEntries) && this.batchEntries >= 1, 'batchEntries must be a positive integer');
    this.afterBatch = options.afterBatch;
    this.records = new ContestRecords(store);
  }

  /**
   * Call on the contest's lane, with the contest as last committed. Starts the settlement, or continues the
   * one its `settling` record shows (then `kind` must be that one), and resolves with the final record.
   */
  async settle(contest: ContestRecord, kind: SettlementKind, nowMs: number): Promise<ContestRecord> {
    assert.equal(contest.status, 'open');
    if (contest.settling !== undefined) assert.equal(kind, contest.settling.kind, 'a settlement cannot change its kind');
    // A continued settlement keeps the time of its decision, so every journal entry of it carries one time.
    const atMs = contest.settling?.atMs ?? nowMs;
    // A stop is checked before any work, between scoring pages and between batches, so it waits for one
    // page or one batch at most, whatever the number of contests and entries.
    this.throwIfStopping(contest);
    // The decision is durable before any money moves: a crash (or a shard that fails while another commits)
    // after the first refund or collect then leaves a contest that says how it ends, and whatever finishes
    // it (recover(), a retried void or resolve) continues that settlement, never starts the other one over
    // entries already settled or collected.
    if (contest.settling === undefined) contest = await this.decide(contest, kind, atMs);
    const plan =
      kind === 'void' ? voidPlan() : await resolvePlan(contest, this.records, this.marketOf, () => this.throwIfStopping(contest));
    if (kind === 'resolve' && contest.settling?.phase === 'collect') {
      contest = await this.collectStakes(contest, atMs);
    }
    for (;;) {
      const after = await this.settleBatch(contest.contestId, plan, atMs);
      await this.afterBatch?.(progressOf(after, kind));
      if (after.status !== 'open') return after;
      this.throwIfStopping(after);
      // Whatever waited while the batch held the thread (requests, socket frames, timers) runs before the next.
      await nextTurn();
    }
  }

  private throwIfStopping(contest: ContestRecord): void {
    if (this.isStopping()) throw new SettlementInterrupted(contest.contestId, contest.settling?.settledCount ?? 0, contest.entriesFilled);
  }

  /** Writes the settlement's decision, with no entry done yet: a resolution starts with its collect sweep. */
  private async decide(contest: ContestRecord, kind: SettlementKind, atMs: number): Promise<ContestRecord> {
    const next = inProgress(contest, {
      kind,
      atMs,
      phase: kind === 'resolve' ? 'collect' : 'pay',
      lastKey: '',
      settledCount: 0,
      paidMicros: 0,
      // A void pays nothing by score: only a resolution has payout rules to keep.
      ...(kind === 'resolve' ? { payoutRules: 'by_place' as const } : {}),
    });
    await this.store.transact(() => {
      this.records.putContest(next);
    });
    return next;
  }

  // ---- the collect sweep ----

  /** Every entry's stake into the pot, batch by batch, with the progress written after each. */
  private async collectStakes(contest: ContestRecord, atMs: number): Promise<ContestRecord> {
    const { contestId } = contest;
    for (;;) {
      const progress = contest.settling;
      const rows = [...this.records.entriesAfter(contestId, progress?.lastKey || null, this.batchEntries + 1)];
      const batch = rows.slice(0, this.batchEntries);
      const byShard = new Map<number, string[]>();
      for (const { value: entry } of batch) {
        const shard = this.owners.shardOfUser(entry.userId);
        let refs = byShard.get(shard);
        if (refs === undefined) byShard.set(shard, (refs = []));
        refs.push(entryRef(entry));
      }
      await everyShard([...byShard].map(([shard, refs]) => this.owners.moveMoney(shard, { op: 'collect_entries', contestId, refs, atMs })));
      const isLast = rows.length <= this.batchEntries;
      const settling: SettlingRecord = isLast
        ? { kind: 'resolve', atMs, phase: 'pay', lastKey: '', settledCount: 0, paidMicros: 0, ...rulesOf(progress) }
        : {
            kind: 'resolve',
            atMs,
            phase: 'collect',
            lastKey: batch.at(-1)!.key,
            settledCount: (progress?.settledCount ?? 0) + batch.length,
            paidMicros: 0,
            ...rulesOf(progress),
          };
      const next = inProgress(contest, settling);
      await this.store.transact(() => {
        this.records.putContest(next);
      });
      contest = next;
      if (isLast) return contest;
      this.throwIfStopping(contest);
      await nextTurn();
    }
  }

  // ---- one batch ----

  /**
   * The next batch: its entries settled by their shards, then the progress (or the final status) written.
   * Returns the contest record as written.
   */
  private async settleBatch(contestId: string, plan: SettlementPlan, atMs: number): Promise<ContestRecord> {
    const contest = this.records.contest(contestId);
    assert.ok(contest !== undefined && contest.status === 'open', `contest ${contestId} is not open at a settlement batch`);
    const progress = contest.settling;
    if (progress !== undefined) {
      assert.equal(progress.kind, plan.kind);
      assert.equal(progress.atMs, atMs);
    }
    // One row more than the batch tells whether this batch is the last, without an extra empty round.
    const rows = [...this.records.entriesAfter(contestId, progress?.lastKey || null, this.batchEntries + 1)];
    const batch = rows.slice(0, this.batchEntries);
    let paidMicros = BigInt(progress?.paidMicros ?? 0);
    const byShard = new Map<number, EntryMoney[]>();
    for (const { key, value: entry } of batch) {
      assert.equal(entry.stakeMicros, contest.betAmountMicros);
      const settled = plan.settleEntry(entry);
      paidMicros += settled.paidMicros;
      if (entry.settlement !== null) {
        // Settled by an earlier attempt whose progress a crash lost: exactly as this one would settle it.
        assert.deepEqual(entry.settlement, settled.settlement, `entry ${key} was settled otherwise`);
        continue;
      }
      const shard = this.owners.shardOfEntrySettlement(entry.userId, settled.payoutMicros !== null);
      let entries = byShard.get(shard);
      if (entries === undefined) byShard.set(shard, (entries = []));
      entries.push({
        ref: entryRef(entry),
        userId: entry.userId,
        payoutMicros: settled.payoutMicros === null ? null : settled.payoutMicros.toString(),
        write: settledEntryWrite(key, { ...entry, settlement: settled.settlement }),
      });
    }
    assert.ok(paidMicros <= BigInt(totalPotMicros(contest)), `contest ${contestId} pays more than its pot`);
    await everyShard(
      [...byShard].map(([shard, entries]) => this.owners.moveMoney(shard, { op: 'settle_entries', contestId, entries, atMs })),
    );
    const settledCount = (progress?.settledCount ?? 0) + batch.length;
    const isLast = rows.length <= this.batchEntries;
    const next = isLast
      ? finished(contest, plan, atMs, settledCount, paidMicros)
      : inProgress(contest, {
          kind: plan.kind,
          atMs,
          phase: 'pay',
          lastKey: batch.at(-1)!.key,
          settledCount,
          paidMicros: Number(paidMicros),
          ...rulesOf(progress),
        });
    // On the contest's lane this is the contest record's only writer: no re-read is needed. The last batch
    // closes the pool in the same transaction: what the contest did not pay goes back to the protocol.
    if (isLast && this.owners.engine === 'journal') {
      await this.closeOwnedPool(
        next,
        plan.kind === 'resolve' ? BigInt(totalPotMicros(contest)) - paidMicros : BigInt(contest.protocolPrizePoolMicros),
      );
      return next;
    }
    await this.store.transact(() => {
      this.records.putContest(next);
      if (isLast) this.ledger.closePool(contestId, atMs);
    });
    return next;
  }

  /**
   * The journal engine: the protocol's owner closes the pool with the contest's final record, both durable or
   * neither (a crash before leaves the contest open, and the next start finishes it again). `expectedMicros`:
   * what the pool holds once every stake collected has arrived; refused POOL_SHORT while some are still on
   * their way from other shards, so it is asked again.
   */
  private async closeOwnedPool(final: ContestRecord, expectedMicros: bigint): Promise<void> {
    const call = { op: 'close_pool', contestId: final.contestId, expectedMicros } as const;
    const shard = this.owners.shardOfAccount(PROTOCOL);
    for (let tries = 1; ; tries++) {
      const answer = await this.owners.ownerCall(shard, call, [this.records.contestWrite(final)]);
      if (answer.ok) return;
      assert.equal(answer.code, 'POOL_SHORT', `contest ${final.contestId}: its pool cannot close (${answer.code})`);
      // Stakes still on their way after every try: the settlement is continued later (resolution.ts
      // retryFinish), from this last batch, whose entries are already settled.
      if (tries >= POOL_SHORT_TRIES) throw overloaded();
      await new Promise((resolve) => setTimeout(resolve, POOL_SHORT_RETRY_MS));
    }
  }
}

/**
 * A settlement left at a page or batch boundary because the service stops: durable so far (whole batches),
 * continued by the next start. Not a failure: logged at info.
 */
export class SettlementInterrupted extends Error {
  constructor(contestId: string, settledCount: number, entryCount: number) {
    super(
      `contest ${contestId}: settlement stopped with the service after ${settledCount} of ${entryCount} entries; the next start continues it`,
    );
  }
}

/**
 * Waits for every shard's part of a batch, then throws if any failed. Promise.all would throw at the first
 * failure with other shards' transactions still in flight, and the lane would take its next task (a retried
 * void or resolve) while they commit; settled this way, the contest's record says what LMDB holds.
 */
async function everyShard(moves: readonly Promise<unknown>[]): Promise<void> {
  const failures = (await Promise.allSettled(moves)).flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
  // A broken invariant first: it must still stop the process (resolution.ts logSettlementFailure).
  if (failures.length > 0) throw failures.find((err) => err instanceof AssertionError) ?? failures[0];
}

/** The payout rules a settlement was decided under, carried into each progress record after it (absent: the former). */
function rulesOf(progress: SettlingRecord | undefined): Pick<SettlingRecord, 'payoutRules'> {
  return progress?.payoutRules === undefined ? {} : { payoutRules: progress.payoutRules };
}

function inProgress(contest: ContestRecord, settling: SettlingRecord): ContestRecord {
  return { ...contest, settling };
}

/** The contest once every entry is settled: the counts and the money are asserted whole before it is written. */
function finished(contest: ContestRecord, plan: SettlementPlan, atMs: number, settledCount: number, paidMicros: bigint): ContestRecord {
  assert.equal(
    settledCount,
    contest.entriesFilled,
    `contest ${contest.contestId}: settled ${settledCount} of ${contest.entriesFilled} entries`,
  );
  assert.equal(paidMicros, plan.totalPaidMicros, `contest ${contest.contestId} paid ${paidMicros}, its scores pay ${plan.totalPaidMicros}`);
  const { settling: _progress, ...rest } = contest;
  const status = plan.kind === 'void' ? 'voided' : 'resolved';
  return { ...rest, status, resolvedAtMs: atMs, paidMicros: Number(paidMicros) };
}

function progressOf(contest: ContestRecord, kind: SettlementKind): SettleProgress {
  const isFinished = contest.status !== 'open';
  return {
    contestId: contest.contestId,
    kind,
    settledCount: isFinished ? contest.entriesFilled : contest.settling!.settledCount,
    entryCount: contest.entriesFilled,
    isFinished,
  };
}
