// The thread of the owner that makes the writes (an RFQ shard actor, issue 34). The read model's writer: the
// owner decides records in memory, makes them durable in its journal (src/wal/journal.ts), and hands the
// records' LMDB writes here, tagged with the journal seq they came from. They go into LMDB later, in large
// batches, each batch ONE LMDB transaction that also stores the owner's `appliedSeq` (the highest seq in it),
// so LMDB always holds the state after a whole prefix of seqs: recovery loads it and replays the journal from
// appliedSeq + 1. GETs and views read LMDB and lag the owner by at most `intervalMs` plus one commit; the owner
// reads its own writes through `get`, which looks here before LMDB.
//
// How a batch leaves the owner's thread (measured: docs/performance.md "The read model's writer"): one
// lmdb-js `batch` of blind puts and removes. The owner encodes each value (msgpack) into lmdb-js's shared
// instruction buffer; lmdb-js's own write thread does the B-tree work, the commit and its flushes. Per RFQ
// that costs the owner 0.65-0.68x of an async `transaction` (whose callback does the B-tree work on the
// owner) and 0.69-0.73x the process CPU of `transactionSync` on a dedicated thread (which costs the owner
// 0.6-0.7x of this: the writes are structured-cloned to it, then encoded there); on two shared cores the
// process's CPU decides. A `batch` is one conditional block of instructions, which lmdb-js's write thread
// runs inside one transaction: the records and their appliedSeq are committed together or not at all. The environment keeps db.ts's flags
// (overlappingSync off, so each commit is flushed before it resolves; no noSync, no writemap): LMDB's
// copy-on-write B-tree and its two meta pages then leave the last whole commit after a kill -9 or a power
// loss, never a torn one. The flushes are no longer on anyone's critical path (the journal is the durability)
// and cost two per batch, at most 1000 / intervalMs batches a second. Because each commit is flushed before
// `onApplied`, the owner may cut its journal up to the seq it is told (a snapshot point), never past it.
//
// Bounds: at most `maxPendingWrites` writes held (coalesced, not yet committed); past it `write` refuses and
// the owner sheds new work (503 OVERLOADED). One commit in flight at a time. A failed commit (disk or map
// full, an I/O error) is retried with backoff, its writes kept and still read by `get`. A failure for want of
// space goes through room.ts like any other commit's: every thread refuses new work (StorageRoom.assertRoom)
// for a while, the writes that finish accepted work pile up here until the bound, and the retry that commits
// ends the refusal (noteCommitted). Nothing is lost meanwhile: every write is in the owner's journal too.
import assert from 'node:assert/strict';
import type { DbName, Store } from './db.js';
import { forgetStoreStructures } from './db.js';
import { metaTable, type RecordTypes } from './records.js';

/** A blind put (a value) or remove (`value: undefined`) of one key of a named database, typed by its database. */
export type BlindWrite = { [K in DbName]: { db: K; key: string; value: RecordTypes[K] | undefined } }[DbName];

export interface WriteBehindOptions {
  /** Names the owner's appliedSeq in 'meta' (appliedSeqKey): one writer per owner name. */
  owner: string;
  /** A batch is committed at most this often (ms), unless `maxBatchWrites` piled up first; the views' lag bound. */
  intervalMs: number;
  /** Coalesced writes that start a commit without waiting for `intervalMs`. */
  maxBatchWrites: number;
  /** Writes held (pending and in the commit in flight) past which `write` refuses. */
  maxPendingWrites: number;
  /** Every write up to `seq` is in LMDB. Called on the owner's thread, in seq order, once per commit. */
  onApplied(seq: number): void;
  /** A commit failed and will be tried again after `delayMs` (for the owner's log); its writes are kept. */
  onCommitFailure(error: unknown, attempt: number, delayMs: number): void;
}

/**
 * Defaults for an RFQ shard (docs/performance.md "The read model's writer"). 25 ms: measured lag p99 37–51 ms
 * at 500–2,000 RFQ/s on a loaded machine, half the documented 100 ms, leaving room for a slow commit (50 ms
 * gave p99 61–75 ms, 100 ms broke the bound at 115–180). A batch of 10,000 writes (~600 RFQs after
 * coalescing; 2,000 RFQ/s fill ~850 writes in 25 ms) keeps one commit's B-tree work short after a stall;
 * 50,000 writes held (~3,000 RFQs, ~1.5 s at 2,000 RFQ/s, tens of MB) is how long a stalled disk is ridden
 * out before the owner sheds.
 */
export const READ_MODEL_DEFAULTS = { intervalMs: 25, maxBatchWrites: 10_000, maxPendingWrites: 50_000 } as const;

/** Backoff of a failed commit: 50 ms doubling to 5 s (room.ts refuses new work meanwhile). */
const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 5_000;

/** The 'meta' key of an owner's applied seq. */
export const appliedSeqKey = (owner: string): string => `readModel:${owner}:appliedSeq`;

/** The seq up to which an owner's writes are in LMDB (0: none yet), what recovery replays the journal after. */
export function readAppliedSeq(store: Store, owner: string): number {
  return metaTable<number>(store).get(appliedSeqKey(owner)) ?? 0;
}

/** Writes by database, then key; `undefined` is a remove. Nested maps: no key string built per write. */
type Generation = Map<DbName, Map<string, unknown>>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class WriteBehind {
  readonly #store: Store;
  readonly #options: WriteBehindOptions;
  readonly #metaKey: string;
  /** Accepted, not yet handed to a commit. */
  #pending: Generation = new Map();
  #pendingCount = 0;
  /** Handed to the commit in flight (or being retried); null when none is. */
  #inflight: Generation | null = null;
  #inflightCount = 0;
  /** Highest seq accepted; highest handed to a commit; highest committed. */
  #lastSeq: number;
  #handedSeq: number;
  #appliedSeq: number;
  #lastCommitStartMs = -Infinity;
  #timer: NodeJS.Timeout | null = null;
  #flushWaiters: Array<{ seq: number; resolve: () => void }> = [];
  /** Commits made since construction (for the benchmark and the owner's metrics). */
  commits = 0;

  constructor(store: Store, options: WriteBehindOptions) {
    assert.ok(options.intervalMs >= 0 && options.maxBatchWrites >= 1, 'intervalMs >= 0 and maxBatchWrites >= 1');
    assert.ok(options.maxPendingWrites >= options.maxBatchWrites, 'maxPendingWrites must hold a batch');
    this.#store = store;
    this.#options = options;
    this.#metaKey = appliedSeqKey(options.owner);
    this.#appliedSeq = readAppliedSeq(store, options.owner);
    this.#lastSeq = this.#appliedSeq;
    this.#handedSeq = this.#appliedSeq;
  }

  /** Every write up to this seq is committed to LMDB. */
  get appliedSeq(): number {
    return this.#appliedSeq;
  }

  /** Writes held, coalesced: pending and in the commit in flight (what `maxPendingWrites` bounds). */
  get pendingWrites(): number {
    return this.#pendingCount + this.#inflightCount;
  }

  /** Whether `write` would take `writeCount` more writes now: an owner asks before it journals new work. */
  hasRoom(writeCount: number): boolean {
    return this.pendingWrites + writeCount <= this.#options.maxPendingWrites;
  }

  /**
   * Takes the writes of journal record `seq` (non-decreasing; all of one seq before a commit takes it), or
   * returns false and takes none when they would pass `maxPendingWrites`: the owner sheds load.
   */
  write(seq: number, writes: readonly BlindWrite[]): boolean {
    assert.ok(Number.isSafeInteger(seq) && seq >= this.#lastSeq, `seq ${seq} after ${this.#lastSeq}`);
    // A seq a commit already took would be stored as applied without these writes: recovery would skip them.
    assert.ok(seq > this.#handedSeq, `seq ${seq} was already committed as whole`);
    assert.ok(writes.length <= this.#options.maxPendingWrites, 'one record writes more than maxPendingWrites');
    if (!this.hasRoom(writes.length)) return false;
    this.#lastSeq = seq;
    for (const write of writes) this.#take(write.db, write.key, write.value);
    this.#schedule();
    return true;
  }

  /** The owner's view: its latest write of the key if not yet committed, else LMDB's. */
  get<N extends DbName>(db: N, key: string): RecordTypes[N] | undefined {
    const pending = this.#pending.get(db);
    if (pending?.has(key) === true) return pending.get(key) as RecordTypes[N] | undefined;
    const inflight = this.#inflight?.get(db);
    if (inflight?.has(key) === true) return inflight.get(key) as RecordTypes[N] | undefined;
    return this.#store.db<RecordTypes[N]>(db).get(key);
  }

  /** Resolves once every write taken before the call is committed; commits at once, without waiting for intervalMs. */
  flush(): Promise<void> {
    if (this.#appliedSeq >= this.#lastSeq) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#flushWaiters.push({ seq: this.#lastSeq, resolve });
      this.#schedule();
    });
  }

  #take(db: DbName, key: string, value: unknown): void {
    let writes = this.#pending.get(db);
    if (writes === undefined) this.#pending.set(db, (writes = new Map()));
    if (!writes.has(key)) {
      writes.set(key, value);
      this.#pendingCount++;
      return;
    }
    if (value === undefined && writes.get(key) !== undefined && !this.#existsOnceCommitted(db, key)) {
      // A put then remove of a key that is not on the disk, nor on its way there: nothing to write.
      writes.delete(key);
      this.#pendingCount--;
      return;
    }
    writes.set(key, value); // the last write wins
  }

  /** Whether the key will exist in LMDB once the commit in flight (if any) is done. */
  #existsOnceCommitted(db: DbName, key: string): boolean {
    const inflight = this.#inflight?.get(db);
    if (inflight?.has(key) === true) return inflight.get(key) !== undefined;
    return this.#store.db(db).doesExist(key);
  }

  /** Starts a commit now, or sets the timer for when one may start; nothing while one is in flight. */
  #schedule(): void {
    if (this.#inflight !== null || this.#lastSeq === this.#handedSeq) return;
    const isDue =
      this.#pendingCount >= this.#options.maxBatchWrites ||
      this.#flushWaiters.length > 0 ||
      performance.now() - this.#lastCommitStartMs >= this.#options.intervalMs;
    if (this.#timer !== null) {
      if (!isDue) return;
      clearTimeout(this.#timer);
    }
    // Even a due commit waits for the end of the turn (a 0 ms timer), so that the turn's writes share it.
    const delayMs = isDue ? 0 : this.#lastCommitStartMs + this.#options.intervalMs - performance.now();
    // Not unref'd: pending writes keep the thread alive until they are committed (at most intervalMs away).
    this.#timer = setTimeout(this.#startCommit, delayMs);
  }

  readonly #startCommit = (): void => {
    this.#timer = null;
    if (this.#inflight !== null || this.#lastSeq === this.#handedSeq) return;
    const batch = this.#pending;
    const seq = this.#lastSeq;
    this.#inflight = batch;
    this.#inflightCount = this.#pendingCount;
    this.#pending = new Map();
    this.#pendingCount = 0;
    this.#handedSeq = seq;
    this.#lastCommitStartMs = performance.now();
    void this.#commitUntilDone(batch, seq);
  };

  async #commitUntilDone(batch: Generation, seq: number): Promise<void> {
    let delayMs = FIRST_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#commitOnce(batch, seq);
        if (attempt > 1) this.#store.room.noteCommitted();
        break;
      } catch (error) {
        // Nothing of the batch was written: same writes again, encoded afresh (db.ts forgetStoreStructures).
        forgetStoreStructures(this.#store);
        this.#options.onCommitFailure(await this.#store.room.asOperatingError(error), attempt, delayMs);
        await sleep(delayMs);
        delayMs = Math.min(delayMs * 2, MAX_RETRY_MS);
      }
    }
    this.commits++;
    this.#inflight = null;
    this.#inflightCount = 0;
    this.#appliedSeq = seq;
    this.#options.onApplied(seq);
    const waiters = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const waiter of waiters) {
      if (waiter.seq <= seq) waiter.resolve();
      else this.#flushWaiters.push(waiter);
    }
    this.#schedule();
  }

  /** One lmdb-js batch: run by its write thread in one transaction with the appliedSeq. */
  #commitOnce(batch: Generation, seq: number): Promise<unknown> {
    const store = this.#store;
    return store.root.batch(() => {
      for (const [name, writes] of batch) {
        const db = store.db<unknown>(name);
        for (const [key, value] of writes) {
          if (value === undefined) void db.remove(key);
          else void db.put(key, value);
        }
      }
      void metaTable<number>(store).put(this.#metaKey, seq);
    });
  }
}
