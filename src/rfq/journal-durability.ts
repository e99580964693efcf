// Inside an RFQ shard: the journal engine (PARLAYD_ENGINE=journal, docs/engine.md). The shard owns its
// accounts in memory (engine/owner-runtime.ts: the owner's decisions, its journal, snapshots, its read model
// written behind to LMDB, its ports to the other shards). Each RFQ costs two journal records: its create with
// its reservation and its end with its money, each carrying the RFQ's records as facts, so both are durable or
// neither. Nothing here waits for the disk: a call is decided at once and its promise settles once durable.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TimerClock } from '../lib/clock.js';
import { overloaded } from '../lib/errors.js';
import { isOverloaded } from '../lib/overload-retries.js';
import { makerAccount, type AccountId } from '../records/ledger.js';
import type { Effect } from '../engine/effects.js';
import { OwnerRuntime, type OwnerCall } from '../engine/owner-runtime.js';
import type { OwnerRuntimeOptions } from '../engine/owner-runtime.js';
import type { MoneyAnswer, MoneyCall } from '../ledger/money-ops.js';
import type { Store } from '../store/db.js';
import type { BlindWrite, RecordTypes } from '../store/records.js';
import type { ActiveRfq } from './active-rfq.js';
import type { FillRecord } from '../records/fills.js';
import { JournalMoney } from './journal-money.js';
import type { CreateRfq } from './messages.js';
import type { ChannelPoint, MoneyOp, MoneyResult } from '../ledger/money-ops.js';
import { endedRecord, rfqRef, type RfqRecord } from '../records/rfqs.js';
import { createdWrites, endedWrites, fillWrites } from './rfq-records.js';
import { UNCOVERED, type RfqDurability, type WrittenEnd } from './rfq-durability.js';

/** The owners' limits in the service (owner.ts OwnerLimits): a lock is asked about, and resent, within a second. */
const OWNER_LIMITS = { lockTimeoutMs: 2_000, lockQueryMs: 2_000, resendMs: 100, resendPerTick: 256 };
const OWNER_TICK_MS = 20;
/** Records between snapshots: at ~2 records an RFQ, a restart replays at most ~25,000 RFQs (~0.3 s). */
const SNAPSHOT_EVERY_RECORDS = 50_000;
/** Journal bytes not yet flushed past which new work is refused 503 (the disk is behind): ~4,000 RFQs. */
const MAX_PENDING_JOURNAL_BYTES = 2 << 20;
/** An end refused for a journal or read model behind is tried again this much later (accepted work is never dropped). */
const END_RETRY_MS = 5;
/** How often a barrier that waits for money on its way from another shard looks again. */
const TRANSIT_POLL_MS = 1;
/**
 * No RFQ is marked active in LMDB (`rfqActive`): a restart finds the RFQs to end by the owner's holds in its
 * journal (interruptedFacts), so neither the create writes the marker nor the end removes it.
 */
const NEVER_MARKED = false;

export interface JournalDurabilityOptions {
  /** The thread's LMDB environment: the owner's read model, and the markets a fill checks. */
  store: Store;
  /** The owner's journal and snapshots (ownerDir). */
  dir: string;
  /** The owner this shard is (its number names it: request ids carry it). */
  self: number;
  /** Whose account or credit key a name is: routing.ts ownerOfName in one process, the partition map in a cluster. */
  ownerOf: (name: AccountId) => number;
  /** The owner's links to the others: ports between threads (engine/peer-links.ts), or NATS (cluster/nats-links.ts). */
  links: OwnerRuntimeOptions['links'];
  /**
   * Whether `store` holds the read model of the other owners too (one process's shared LMDB): then a quote
   * whose maker lives elsewhere is passed over when the maker's available, as last written, cannot cover it.
   * Otherwise (a shard node's own LMDB) the maker's owner decides it when asked for the lock.
   */
  readsOtherOwners: boolean;
  /** Records between snapshots (SNAPSHOT_EVERY_RECORDS unless given). */
  snapshotEveryRecords?: number;
  firstRecord?: Effect[];
  clock: TimerClock;
  onFailure(error: Error): void;
}

/** The owner's directory of shard `shard`: its journal files and snapshots. */
export const ownerDir = (dataDir: string, shard: number) => join(dataDir, 'engine', `owner-${shard}`);

export class JournalDurability implements RfqDurability {
  readonly #runtime: OwnerRuntime;
  readonly #money: JournalMoney;
  readonly #clock: TimerClock;
  readonly #store: Store;
  readonly #interrupted: number;
  readonly #readsOtherOwners: boolean;
  /** RFQs whose end is on its way to the journal, as they read until it is durable (their record as created). */
  readonly #ending = new Map<string, RfqRecord>();

  constructor(options: JournalDurabilityOptions) {
    this.#clock = options.clock;
    this.#store = options.store;
    this.#readsOtherOwners = options.readsOtherOwners;
    let interrupted = 0;
    this.#runtime = new OwnerRuntime({
      dir: options.dir,
      self: options.self,
      ownerOf: options.ownerOf,
      store: options.store,
      links: options.links,
      limits: OWNER_LIMITS,
      tickMs: OWNER_TICK_MS,
      snapshotEveryRecords: options.snapshotEveryRecords ?? SNAPSHOT_EVERY_RECORDS,
      maxPendingBytes: MAX_PENDING_JOURNAL_BYTES,
      ...(options.firstRecord === undefined ? {} : { firstRecord: options.firstRecord }),
      // Contract section 6: an RFQ active at the last stop ends failed SERVICE_RESTARTED, its wager released
      // in the same record as the records that say so.
      interruptedFacts: (ref, read) => {
        const record = read('rfqs', ref.slice('rfq:'.length));
        if (record === undefined) return [];
        interrupted++;
        const nowMs = options.clock.nowMs();
        return endedWrites(
          endedRecord(record, { status: 'failed', fill: null, error: 'SERVICE_RESTARTED', terminalAtMs: nowMs }),
          NEVER_MARKED,
        );
      },
      nowMs: () => options.clock.nowMs(),
      onFailure: options.onFailure,
    });
    this.#interrupted = interrupted;
    this.#money = new JournalMoney(this.#runtime, options.store);
  }

  /** The owner itself: a shard node answers the money calls of its partitions through it (cluster/owner-node.ts). */
  get runtime(): OwnerRuntime {
    return this.#runtime;
  }

  failInterrupted(): Promise<number> {
    return Promise.resolve(this.#interrupted); // done as the owner opened (OwnerHost.open)
  }

  replayKey(replayKey: string) {
    return this.#read('rfqKeys', replayKey);
  }

  /** An RFQ whose end is decided but not yet durable reads as it was: a crash could still take the end back. */
  readRfq(requestId: string): RfqRecord | undefined {
    return this.#ending.get(requestId) ?? this.#read('rfqs', requestId);
  }

  /** No held create here: the journal's group commit already shares one flush among every record of a turn. */
  create(command: CreateRfq, created: RfqRecord): Promise<number> | null {
    const startNs = process.hrtime.bigint();
    const replay = { key: command.replayKey, contentHash: command.contentHash };
    const call = this.#runtime.call(
      { op: 'reserve', userId: command.userId, amountMicros: BigInt(command.wagerMicros), ref: rfqRef(created.requestId) },
      createdWrites(created, replay, NEVER_MARKED),
    );
    if (call === 'overloaded') throw overloaded();
    if (call.decided !== 'pending' && !call.decided.ok) {
      assert.equal(call.decided.code, 'INSUFFICIENT_BALANCE', `a new RFQ's reservation refused ${call.decided.code}`);
      return null;
    }
    return call.answer.then(() => elapsedUs(startNs));
  }

  async release(rfq: ActiveRfq, ended: RfqRecord): Promise<WrittenEnd | null> {
    const startNs = process.hrtime.bigint();
    const { answer } = await this.#ended(ended.requestId, () =>
      this.#end({ op: 'release', ref: rfqRef(ended.requestId) }, endedWrites(ended, NEVER_MARKED)),
    );
    assert.ok(answer.ok && answer.isMoved === true, `RFQ ${ended.requestId} ended with no reservation to release`);
    return { record: ended, persistUs: elapsedUs(startNs) };
  }

  /** Reads of the RFQ show it as it was until its end settles (readRfq). */
  async #ended<T>(requestId: string, end: () => Promise<T>): Promise<T> {
    const before = this.#ending.get(requestId) ?? this.#read('rfqs', requestId);
    if (before !== undefined) this.#ending.set(requestId, before);
    try {
      return await end();
    } finally {
      this.#ending.delete(requestId);
    }
  }

  /**
   * Every leg is checked against LMDB's latest commit at the moment the fill is decided (a market resolved
   * just before is seen). A fill whose maker lives on another shard locks the liability there first (two
   * phases, engine/owner.ts); should a leg's market resolve while it waits, the position is settled at once
   * after it commits, since the resolution's sweep may have run before the fill reached the read model.
   */
  async fill(rfq: ActiveRfq, completed: RfqRecord, fill: FillRecord, areLegsOpen: () => boolean) {
    const startNs = process.hrtime.bigint();
    const { requestId, terminalAtMs } = completed;
    assert.ok(terminalAtMs !== null);
    this.#store.root.resetReadTxn();
    if (!areLegsOpen()) {
      return this.release(rfq, endedRecord(completed, { status: 'failed', fill: null, error: 'MARKET_CLOSED', terminalAtMs }));
    }
    const filledMicros = BigInt(fill.filledWagerMicros);
    const call: MoneyCall = {
      op: 'fill',
      ref: rfqRef(requestId),
      filledMicros,
      makerAddress: fill.makerAddress,
      liabilityMicros: BigInt(fill.payoutMicros) - filledMicros,
    };
    const made = await this.#ended(requestId, () =>
      this.#end(call, [...fillWrites(completed, fill), ...endedWrites(completed, NEVER_MARKED)]),
    );
    if (!made.answer.ok) return UNCOVERED; // UNCOVERED, or the maker's shard did not answer in time: the next quote
    if (made.isRemote) {
      this.#store.root.resetReadTxn();
      if (!areLegsOpen()) this.#settleNow(requestId);
    }
    return { record: completed, persistUs: elapsedUs(startNs) } satisfies WrittenEnd;
  }

  /**
   * A filled position whose market resolved while its fill waited for the maker's lock: settled now, and
   * asked again while the owner refuses calls (its journal or read model behind), as an end is (#end). A
   * settlement is idempotent, so a repeat moves nothing twice; anything but OVERLOADED is a bug and stops the
   * thread.
   */
  #settleNow(requestId: string): void {
    this.#money.money({ op: 'settle_positions', requestIds: [requestId], atMs: this.#clock.nowMs() }).catch((error: unknown) => {
      if (!isOverloaded(error)) throw error;
      this.#clock.setTimer(() => this.#settleNow(requestId), END_RETRY_MS);
    });
  }

  makerAvailable(makerAddress: string): bigint {
    const account = makerAccount(makerAddress);
    if (this.#runtime.ownerOf(account) === this.#runtime.book.self) return this.#runtime.book.available(account);
    if (!this.#readsOtherOwners) return UNKNOWN_AVAILABLE; // the lock asked of the maker's owner decides
    return BigInt(this.#read('accounts', account)?.available ?? '0'); // the read model: the maker's shard decides
  }

  money(op: MoneyOp): Promise<MoneyResult> {
    return this.#money.money(op);
  }

  async barrier(after?: ChannelPoint): Promise<ChannelPoint[]> {
    const { book } = this.#runtime;
    const sent: ChannelPoint[] = [];
    for (const [owner, outbox] of book.outboxes) if (outbox.nextSeq > 1) sent.push({ owner, from: book.self, seq: outbox.nextSeq - 1 });
    if (after !== undefined) {
      assert.equal(after.owner, book.self);
      // Channels are resent until applied (engine/owner.ts), so this ends; a tick's wait at most, normally.
      while ((this.#runtime.book.received.get(after.from) ?? 0) < after.seq) {
        await new Promise((resolve) => this.#clock.setTimer(() => resolve(undefined), TRANSIT_POLL_MS));
      }
    }
    await this.#runtime.barrier();
    return sent;
  }

  takeCommitCounts() {
    return { commits: 0, transactions: 0 };
  }

  close(): Promise<void> {
    return this.#runtime.close();
  }

  #read<N extends keyof RecordTypes>(db: N, key: string): RecordTypes[N] | undefined {
    return this.#runtime.read(db, key);
  }

  /**
   * An RFQ's end: accepted work, so a refusal for a journal behind is tried again, never dropped. `isRemote`:
   * its answer needed another owner (a fill whose maker lives there).
   */
  async #end(call: MoneyCall, facts: readonly BlindWrite[]): Promise<{ answer: MoneyAnswer; isRemote: boolean }> {
    for (;;) {
      const made: OwnerCall = this.#runtime.call(call, facts);
      if (made !== 'overloaded') return { answer: await made.answer, isRemote: made.decided === 'pending' };
      await new Promise((resolve) => this.#clock.setTimer(() => resolve(undefined), END_RETRY_MS));
    }
  }
}

/** A maker's available that no quote exceeds: wagers and payouts are far below 2^63 micros (contract section 6). */
const UNKNOWN_AVAILABLE = 2n ** 63n;

const elapsedUs = (startNs: bigint) => Number(process.hrtime.bigint() - startNs) / 1000;
