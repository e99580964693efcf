// The thread of the owner that makes the writes (an RFQ shard actor). The read model's writer: the
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
// that costs the owner 0.65-0.73x of an async `transaction` (whose callback does the B-tree work on the
// owner) and 0.69-0.79x the process CPU of `transactionSync` on a dedicated thread (which costs the owner
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
// the owner sheds new work (503 OVERLOADED). One commit in flight at a time; a backlog (a slow disk) is
// sealed into batches of about `maxBatchWrites`, committed in order, each with its own appliedSeq. A failed commit (disk or map
// full, an I/O error) is retried with backoff, its writes kept and still read by `get`. A failure for want of
// space goes through room.ts like any other commit's: every thread refuses new work (StorageRoom.assertRoom)
// for a while, the writes that finish accepted work pile up here until the bound, and the retry that commits
// ends the refusal (noteCommitted). Nothing is lost meanwhile: every write is in the owner's journal too.
import assert from 'node:assert/strict';
import type { DbName, Store } from './db.js';
import { forgetStoreStructures } from './db.js';
import { metaTable, type BlindWrite, type RecordTypes } from './records.js';

export interface WriteBehindOptions {
  /** Names the owner's appliedSeq in 'meta' (appliedSeqKey): one writer per owner name. */
  owner: string;
  /** A batch is committed at most this often (ms), unless `maxBatchWrites` piled up first; the views' lag bound. */
  intervalMs: number;
  /** Coalesced writes that start a commit without waiting for `intervalMs`, and seal a batch (at most one record's more). */
  maxBatchWrites: number;
  /** Writes held, not yet committed (open, sealed, in flight), past which `write` refuses. */
  maxPendingWrites: number;
  /** Every write up to `seq` is in LMDB. Called on the owner's thread, in seq order, once per commit. */
  onApplied(seq: number): void;
  /** A commit failed and will be tried again after `delayMs` (for the owner's log); its writes are kept. */
  onCommitFailure(error: unknown, attempt: number, delayMs: number): void;
}

/**
 * Defaults for an RFQ shard (docs/performance.md "The read model's writer"). 25 ms: measured lag p99 37–51 ms
 * at 500–2,000 RFQ/s on a shared machine, half the documented 100 ms, leaving room for a slow commit (50 ms
 * gave 61–75 ms, 100 ms broke the bound at 115–180; on a contended disk no interval held it). 10,000 writes
 * a batch: over ten times what 2,000 RFQ/s coalesce to in 25 ms (~850), so it only splits a backlog, into
 * commits that hold the owner's thread ~20 ms each to encode (~1.9 µs a write, measured). Smaller batches
 * cap what a slow disk can absorb at maxBatchWrites per commit time: 2,000 did, measured, with ~70 ms commits
 * (lag p99 1.5 s at 2,000 RFQ/s). 50,000 writes held (~3,000 RFQs at ~17 each, ~1.5 s of 2,000 RFQ/s, tens
 * of MB) is how long a stalled disk is ridden out before the owner sheds.
 */
export const READ_MODEL_DEFAULTS = { intervalMs: 25, maxBatchWrites: 10_000, maxPendingWrites: 50_000 } as const;

/** Backoff of a failed commit: 50 ms doubling to 5 s (room.ts refuses new work meanwhile). */
const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 5_000;

/** The 'meta' key of an owner's applied seq. */
export const appliedSeqKey = (owner: string): string => `readModel:${owner}:appliedSeq`;

/** What every writer's applied-seq key starts with. */
const APPLIED_SEQ_PREFIX = appliedSeqKey('').slice(0, -':appliedSeq'.length);

/**
 * Forgets every writer's applied seq, in one transaction: their owners' journals are dropped (a first start
 * that did not finish, engine/first-start.ts), so no seq they name exists any more.
 */
export function forgetAppliedSeqs(store: Store): void {
  const meta = metaTable<number>(store);
  const keys = [...meta.getKeys({ start: APPLIED_SEQ_PREFIX, end: `${APPLIED_SEQ_PREFIX}~` })];
  if (keys.length > 0) store.root.transactionSync(() => keys.forEach((key) => void meta.remove(key)));
}

/** The seq up to which an owner's writes are in LMDB (0: none yet), what recovery replays the journal after. */
export function readAppliedSeq(store: Store, owner: string): number {
  return metaTable<number>(store).get(appliedSeqKey(owner)) ?? 0;
}

/** Writes by database, then key; `undefined` is a remove. Nested maps: no key string built per write. */
type Writes = Map<DbName, Map<string, unknown>>;

/**
 * The coalesced writes of a run of whole seqs, committed as one transaction. A batch is sealed (closed to
 * new seqs) when a commit takes it, or when it holds `maxBatchWrites`: a stalled disk then leaves a queue of
 * batches of bounded size, each one commit, rather than one commit whose encoding would hold the owner's
 * thread for as long as the backlog is large (~2 µs a write, measured).
 */
interface Batch {
  writes: Writes;
  count: number;
  /** The highest seq in it: the appliedSeq its commit stores. */
  lastSeq: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class WriteBehind {
  readonly #store: Store;
  readonly #options: WriteBehindOptions;
  readonly #metaKey: string;
  /** Taking new seqs. */
  #open: Batch;
  /** Sealed, oldest first; the first is in the commit in flight when `#isCommitting`. */
  readonly #sealed: Batch[] = [];
  #sealedCount = 0;
  /** The last seq of the newest sealed batch: no write may come with it or below. */
  #sealedSeq: number;
  #appliedSeq: number;
  #isCommitting = false;
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
    this.#sealedSeq = this.#appliedSeq;
    this.#open = { writes: new Map(), count: 0, lastSeq: this.#appliedSeq };
  }

  /** Every write up to this seq is committed to LMDB. */
  get appliedSeq(): number {
    return this.#appliedSeq;
  }

  /** Writes held, coalesced within each batch: not yet committed (what `maxPendingWrites` bounds). */
  get pendingWrites(): number {
    return this.#open.count + this.#sealedCount;
  }

  /** Whether `write` would take `writeCount` more writes now: an owner asks before it journals new work. */
  hasRoom(writeCount: number): boolean {
    return this.pendingWrites + writeCount <= this.#options.maxPendingWrites;
  }

  /**
   * Takes the writes of journal record `seq` (non-decreasing; all of one seq before its batch is sealed), or
   * returns false and takes none when they would pass `maxPendingWrites`: the owner sheds load.
   */
  write(seq: number, writes: readonly BlindWrite[]): boolean {
    assert.ok(Number.isSafeInteger(seq) && seq >= this.#open.lastSeq, `seq ${seq} after ${this.#open.lastSeq}`);
    // A seq of a sealed batch would be stored as applied without these writes: recovery would skip them.
    assert.ok(seq > this.#sealedSeq, `seq ${seq} was already sealed as whole`);
    assert.ok(writes.length <= this.#options.maxPendingWrites, 'one record writes more than maxPendingWrites');
    if (!this.hasRoom(writes.length)) return false;
    // Sealed only between seqs: a batch exceeds maxBatchWrites by at most one record's writes.
    if (this.#open.count >= this.#options.maxBatchWrites && seq > this.#open.lastSeq) this.#seal();
    this.#open.lastSeq = seq;
    for (const write of writes) this.#take(write.db, write.key, write.value);
    this.#schedule();
    return true;
  }

  /** The owner's view: its latest write of the key if not yet committed, else LMDB's. */
  get<N extends DbName>(db: N, key: string): RecordTypes[N] | undefined {
    const open = this.#open.writes.get(db);
    if (open?.has(key) === true) return open.get(key) as RecordTypes[N] | undefined;
    for (let i = this.#sealed.length - 1; i >= 0; i--) {
      const sealed = this.#sealed[i]!.writes.get(db);
      if (sealed?.has(key) === true) return sealed.get(key) as RecordTypes[N] | undefined;
    }
    return this.#store.db<RecordTypes[N]>(db).get(key);
  }

  /** Resolves once every write taken before the call is committed; commits at once, without waiting for intervalMs. */
  flush(): Promise<void> {
    const seq = this.#open.lastSeq;
    if (this.#appliedSeq >= seq) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#flushWaiters.push({ seq, resolve });
      this.#schedule();
    });
  }

  #take(db: DbName, key: string, value: unknown): void {
    const open = this.#open;
    let writes = open.writes.get(db);
    if (writes === undefined) open.writes.set(db, (writes = new Map()));
    if (!writes.has(key)) {
      writes.set(key, value);
      open.count++;
      return;
    }
    if (value === undefined && writes.get(key) !== undefined && !this.#existsOnceCommitted(db, key)) {
      // A put then remove of a key that is not on the disk, nor on its way there: nothing to write.
      writes.delete(key);
      open.count--;
      return;
    }
    writes.set(key, value); // the last write wins
  }

  /** Whether the key will exist in LMDB once the sealed batches are committed. */
  #existsOnceCommitted(db: DbName, key: string): boolean {
    for (let i = this.#sealed.length - 1; i >= 0; i--) {
      const sealed = this.#sealed[i]!.writes.get(db);
      if (sealed?.has(key) === true) return sealed.get(key) !== undefined;
    }
    return this.#store.db(db).doesExist(key);
  }

  #seal(): void {
    const open = this.#open;
    this.#sealed.push(open);
    this.#sealedCount += open.count;
    this.#sealedSeq = open.lastSeq;
    this.#open = { writes: new Map(), count: 0, lastSeq: open.lastSeq };
  }

  /** Starts a commit at the end of the turn, or sets the timer for when one may start; nothing while one is in flight. */
  #schedule(): void {
    if (this.#isCommitting) return;
    const hasSealed = this.#sealed.length > 0;
    if (!hasSealed && this.#open.lastSeq === this.#sealedSeq) return; // nothing to commit
    const isDue =
      hasSealed ||
      this.#open.count >= this.#options.maxBatchWrites ||
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
    if (this.#isCommitting) return;
    if (this.#sealed.length === 0) {
      if (this.#open.lastSeq === this.#sealedSeq) return;
      this.#seal();
    }
    this.#isCommitting = true;
    this.#lastCommitStartMs = performance.now();
    void this.#commitUntilDone(this.#sealed[0]!);
  };

  async #commitUntilDone(batch: Batch): Promise<void> {
    let delayMs = FIRST_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#commitOnce(batch);
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
    assert.equal(this.#sealed.shift(), batch, 'batches commit in seq order');
    this.commits++;
    this.#sealedCount -= batch.count;
    this.#isCommitting = false;
    this.#appliedSeq = batch.lastSeq;
    this.#options.onApplied(batch.lastSeq);
    const waiters = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const waiter of waiters) {
      if (waiter.seq <= batch.lastSeq) waiter.resolve();
      else this.#flushWaiters.push(waiter);
    }
    this.#schedule();
  }

  /** One lmdb-js batch: run by its write thread in one transaction with the appliedSeq. */
  #commitOnce(batch: Batch): Promise<unknown> {
    const store = this.#store;
    return store.root.batch(() => {
      for (const [name, writes] of batch.writes) {
        const db = store.db<unknown>(name);
        for (const [key, value] of writes) {
          if (value === undefined) void db.remove(key);
          else void db.put(key, value);
        }
      }
      void metaTable<number>(store).put(this.#metaKey, batch.lastSeq);
    });
  }
}
