// The owner's thread: a MoneyOwner (owner.ts) with its journal and snapshots in a directory of its own. Every
// input is decided at once; its effects go to the journal as one record (src/wal/journal.ts: group commit,
// one O_DSYNC pwrite per group on libuv's pool) and its outputs wait until the journal reports that record durable, then leave
// in order (`release`); a lock's request, which tells nothing decided, leaves at once (owner.ts isAskOnly). The
// owner never waits for the disk.
//
// The directory holds `journal-<first seq>` files and `snapshot-<seq>` files. Every `snapshotEveryRecords`
// records the book is taken as of that seq (its accounts encoded in slices between the owner's turns, each
// as it was then), the journal continues in a new file after it, and the snapshot is written beside once
// the old file is durable (to a temporary name, flushed, then renamed: a snapshot file that exists is whole);
// once it is, older snapshots and journal files go. Opening loads the newest snapshot and replays every
// journal record after it, in seq order across files (a crash between a rotation and its snapshot leaves both
// files; one before the old file was durable leaves a gap, and what follows it was never released), then
// fails the RFQs that were active. A full disk never stops the owner: a rotation it refuses is not made, the
// old file's last groups wait for space as every group does, and a snapshot it refuses is dropped (the
// journal since the last one stays whole); either is tried again a quarter of the interval later.
//
// With a read model (read-model.ts: today's LMDB ledger, written behind by store/write-behind.ts), each
// record's writes follow it there once durable (read-model-feed.ts), and the read model's appliedSeq holds
// history back: a restart loads the newest snapshot the read model has passed (each written record is
// projected from the book as it was after that record, so the replay must start before the first record
// LMDB lacks), and a snapshot or journal file goes only when a newer snapshot is both written and passed.
// Credit keys are the one part of the book that only grows (every admin credit has one, forever): with a read
// model the book keeps a key only until LMDB holds its record, and a credit whose key the book no longer has
// is decided from that record (`creditKeyUse`), so memory and snapshots hold only the recent keys.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { AccountId } from '../records/ledger.js';
import { creditKeyUse as storedCreditKeyUse } from '../ledger/credit-keys.js';
import { isOutOfSpace, Journal, syncDirectory } from '../wal/journal.js';
import { Book, type AccountsAtSnapshot, type Buckets } from './book.js';
import type { CreditKeyUse } from '../ledger/money-ops.js';
import type { DbName } from '../store/db.js';
import type { RecordTypes } from '../store/records.js';
import type { BlindWrite } from '../store/records.js';
import { accountRowsJson, decodeEffects, decodeSnapshot, encodeEffects, snapshotChunks, snapshotHead } from './codec.js';
import type { Effect } from './effects.js';
import { ReadModelFeed, type ReadModelSink } from './read-model-feed.js';
import { readModelWrites } from './read-model.js';
import { isAskOnly, MoneyOwner, type OwnerLimits, type Output, type PeerMessage, type Step } from './owner.js';
import type { MoneyAnswer, MoneyCall } from '../ledger/money-ops.js';

export interface OwnerHostOptions {
  dir: string;
  self: number;
  ownerOf: (name: AccountId) => number;
  limits: OwnerLimits;
  /** Records between snapshots: bounds what a restart replays. */
  snapshotEveryRecords: number;
  /** Accounts a snapshot encodes per turn (SNAPSHOT_SLICE_ACCOUNTS unless given: tests slice small books). */
  snapshotSliceAccounts?: number;
  /** Journal bytes not yet flushed past which calls are refused OVERLOADED (the disk is behind). */
  maxPendingBytes: number;
  nowMs(): number;
  /** Outputs whose records are durable, in the order they were decided, on the owner's thread. */
  release(outputs: Output[]): void;
  /** The journal or a snapshot failed: the owner must stop (what it acknowledged is on the disk). */
  onFailure(error: Error): void;
  /** A directory's first start: the owner's first record (engine/from-store.ts), journaled before anything. */
  firstRecord?: Effect[];
  /** The records that say how an interrupted RFQ (its reservation's reference) ended: journaled with its release. */
  interruptedFacts?: (ref: string, read: ReadModelRead) => readonly BlindWrite[];
  /** The read model the owner's records are written to, and the backlog of writes past which calls wait. */
  readModel?: { sink: ReadModelSink; maxWaitingWrites: number };
}

/** A record of the read model as the owner last wrote it (OwnerHost.readModel). */
export type ReadModelRead = <N extends DbName>(db: N, key: string) => RecordTypes[N] | undefined;

export interface OwnerRecovery {
  snapshotSeq: number;
  /** The read model's appliedSeq at the start (Infinity without one): records after it are written again. */
  readModelSeq: number;
  replayedRecords: number;
  lastSeq: number;
}

/** Accounts a snapshot encodes per turn of the owner: a few milliseconds (~2.3 µs an account here). */
const SNAPSHOT_SLICE_ACCOUNTS = 2_000;
/**
 * Interrupted RFQs released per journal record at start: a 3-leg RFQ's release with its records is ~730
 * bytes, so 256 make ~190 KB, well under a record's 1 MiB (wal/record.ts).
 */
const INTERRUPTED_RFQS_PER_RECORD = 256;

const seqName = (prefix: string, seq: number) => `${prefix}-${String(seq).padStart(16, '0')}`;
const seqOf = (name: string, prefix: string) =>
  name.startsWith(`${prefix}-`) && /^\d{16}$/.test(name.slice(prefix.length + 1)) ? Number(name.slice(prefix.length + 1)) : null;

/**
 * Effects per record of a migration's opening state: an opening transfer or a hold encodes in ~100-300 bytes,
 * so a record stays well under wal/record.ts's 1 MiB.
 */
const FIRST_RECORD_EFFECTS = 1_000;

export class OwnerHost {
  readonly owner: MoneyOwner;
  readonly recovery: OwnerRecovery;
  #journal: Journal;
  #headSeq: number;
  #durableSeq: number;
  /** The seq whose record starts the next snapshot: snapshotEveryRecords after the last, sooner after one the disk refused. */
  #snapshotDueSeq: number;
  #isSnapshotting = false;
  /** Outputs waiting for their record: each entry's outputs leave once the journal is durable past `seq`. */
  readonly #gated: Array<{ seq: number; outputs: Output[] }> = [];
  readonly #readModel: ReadModelFeed | null;
  /** Since when the journal has held records not yet durable without reporting any durable; null: none waits. */
  #waitingSinceMs: number | null = null;
  /** With a read model: the book's credit keys by the seq of their record, oldest first, forgotten once LMDB has it. */
  #recentCreditKeys: Array<{ seq: number; key: string }> = [];
  /**
   * True once `close` was called. The thread stops after it, yet inputs can still come (a call queued on the
   * port behind the stop, a peer's message, a call retried by its client): a call is refused OVERLOADED (a 503,
   * nothing decided), and a peer's message is dropped, as a lost one is (the owners' protocol resends commands
   * and asks again about locks; a restart fails the fills in flight). Nothing is appended to a closed journal.
   */
  #isClosing = false;

  private constructor(
    private readonly options: OwnerHostOptions,
    book: Book,
    journal: Journal,
    recovery: OwnerRecovery,
  ) {
    this.owner = new MoneyOwner(book, options.limits);
    this.#journal = journal;
    this.recovery = recovery;
    this.#headSeq = recovery.lastSeq;
    this.#durableSeq = recovery.lastSeq;
    this.#snapshotDueSeq = recovery.snapshotSeq + options.snapshotEveryRecords;
    this.#readModel =
      options.readModel === undefined
        ? null
        : new ReadModelFeed(options.readModel.sink, options.readModel.maxWaitingWrites, recovery.lastSeq);
  }

  static open(options: OwnerHostOptions): OwnerHost {
    mkdirSync(options.dir, { recursive: true });
    // A snapshot's temporary file is never read: one a crash or a refused rename left behind only takes room.
    for (const name of readdirSync(options.dir)) if (name.endsWith('.tmp')) rmSync(join(options.dir, name), { force: true });
    const names = readdirSync(options.dir);
    const snapshots = names.flatMap((name) => seqOf(name, 'snapshot') ?? []).sort((a, b) => a - b);
    const journals = names.flatMap((name) => seqOf(name, 'journal') ?? []).sort((a, b) => a - b);
    const readModelSeq = options.readModel?.sink.appliedSeq ?? Infinity;
    let book = new Book(options.self, options.ownerOf);
    let snapshotSeq = 0;
    const newest = snapshots.filter((seq) => seq <= readModelSeq).at(-1);
    if (newest !== undefined)
      ({ book, seq: snapshotSeq } = decodeSnapshot(readFileSync(join(options.dir, seqName('snapshot', newest))), options.ownerOf));
    assert.equal(book.self, options.self, `the snapshot in ${options.dir} is owner ${book.self}'s`);
    let lastSeq = snapshotSeq;
    let replayed = 0;
    /** Records the read model lacks, projected from the book as each left it, handed on once the host exists. */
    const unwritten: Array<{ seq: number; writes: BlindWrite[] }> = [];
    const recentCreditKeys: Array<{ seq: number; key: string }> = [];
    const visit = (seq: number, payload: Buffer) => {
      if (seq <= snapshotSeq) return;
      assert.equal(seq, lastSeq + 1, `journal record ${seq} follows ${lastSeq}: a record is missing`);
      const effects = decodeEffects(payload);
      for (const effect of effects) book.apply(effect);
      if (seq > readModelSeq) {
        unwritten.push({ seq, writes: readModelWrites(effects, book) });
        for (const effect of effects) if (effect.t === 'credit_key') recentCreditKeys.push({ seq, key: effect.key });
      }
      lastSeq = seq;
      replayed++;
    };
    // Files wholly before the snapshot are left to the cleanup; the others replay in order, the last stays open.
    const live = journals.filter((first, i) => (journals[i + 1] ?? Infinity) > snapshotSeq + 1 || first > snapshotSeq);
    let host: OwnerHost | null = null;
    const onDurable = (seq: number) => {
      if (host !== null) host.#onDurable(seq);
    };
    const onFailure = (error: Error) => options.onFailure(error);
    const journalOptions = { maxPendingBytes: Math.max(2 * options.maxPendingBytes, 4 << 20), preallocateBytes: 0, onDurable, onFailure };
    // Files replay in order. One that starts past the last replayed record follows a gap: the crash came after
    // a rotation opened it and before the file before it was durable. Nothing from the gap on was released (the
    // new file's reports wait for the old file to close), so that file and any after it go, and the journal
    // goes on in the file before the gap, right after its last whole record.
    let journal: Journal | null = null;
    for (const [i, first] of live.entries()) {
      if (journal !== null && first > lastSeq + 1) {
        for (const gone of live.slice(i)) rmSync(join(options.dir, seqName('journal', gone)));
        syncDirectory(options.dir);
        break;
      }
      if (journal !== null) void journal.close();
      journal = Journal.open(join(options.dir, seqName('journal', first)), journalOptions, visit, first).journal;
    }
    journal ??= Journal.open(join(options.dir, seqName('journal', snapshotSeq + 1)), journalOptions, visit, snapshotSeq + 1).journal;
    // An empty last file must start right after what was replayed, or records between them are missing.
    assert.equal(journal.nextSeq, lastSeq + 1, `${options.dir}: the journal goes on at ${journal.nextSeq} after record ${lastSeq}`);
    // Every snapshot and every read model write followed its record's durability: the journal reaches them.
    const written = Math.max(snapshots.at(-1) ?? 0, Number.isFinite(readModelSeq) ? readModelSeq : 0);
    assert.ok(lastSeq >= written, `${options.dir}: the journal ends at ${lastSeq}, before record ${written} that was written from it`);
    host = new OwnerHost(options, book, journal, { snapshotSeq, readModelSeq, replayedRecords: replayed, lastSeq });
    for (const { seq, writes } of unwritten) host.#readModel!.add(seq, writes);
    if (host.#readModel !== null) {
      // Every key of the snapshot and of the records up to readModelSeq is in LMDB: only the later ones stay.
      const recent = new Set(recentCreditKeys.map(({ key }) => key));
      for (const key of [...book.creditKeys.keys()]) if (!recent.has(key)) book.forgetCreditKey(key);
      host.#recentCreditKeys = recentCreditKeys;
    }
    // The records made here are written at once, each before the next: thousands of interrupted RFQs' releases
    // would otherwise pile up past the journal's bound before its first flush, and fail every start. (After a
    // rotation here the current file is the new one; the old file's last record follows on its own flush, and
    // the new file's reports wait for it as always.)
    if (lastSeq === 0 && options.firstRecord !== undefined) {
      // In records of a bounded size (wal/record.ts: 1 MiB): a directory with many funded accounts. A crash
      // between them is a first start that did not finish, which the next start makes again (first-start.ts).
      for (let from = 0; from < options.firstRecord.length; from += FIRST_RECORD_EFFECTS) {
        host.#take({ effects: options.firstRecord.slice(from, from + FIRST_RECORD_EFFECTS), outputs: [] }, true);
        host.#journal.writePendingSync();
      }
    }
    const { interruptedFacts } = options;
    const factsOf =
      interruptedFacts === undefined ? undefined : (ref: string) => interruptedFacts(ref, (db, key) => host.readModel(db, key));
    for (;;) {
      const released = host.owner.recoverInterrupted(options.nowMs(), factsOf, INTERRUPTED_RFQS_PER_RECORD);
      if (released.effects.length === 0) break;
      host.#take(released);
      host.#journal.writePendingSync();
    }
    return host;
  }

  /**
   * A client's call. Returns what was decided at once (the answer is still released only when durable, through
   * `release`), 'pending' when the answer needs another owner (a remote fill's lock), or 'overloaded' when the
   * journal or the read model is too far behind and nothing was decided: 503 OVERLOADED.
   */
  call(callId: number, call: MoneyCall, facts: readonly BlindWrite[] = [], requestId?: string): MoneyAnswer | 'pending' | 'overloaded' {
    if (this.#isClosing) return 'overloaded';
    if (this.#journal.pendingBytes > this.options.maxPendingBytes || this.#readModel?.isBehind === true) return 'overloaded';
    if (call.op === 'credit' && !this.owner.book.creditKeys.has(call.key)) {
      const stored = this.#storedCreditKey(call.key);
      if (stored !== undefined) call = { ...call, stored };
    }
    const step = this.owner.call(callId, call, this.options.nowMs(), facts, requestId);
    const decided = step.outputs.find((output) => output.to === 'client' && output.callId === callId);
    this.#take(step);
    return decided?.to === 'client' ? decided.answer : 'pending';
  }

  peer(from: number, message: PeerMessage): void {
    if (this.#isClosing) return;
    this.#take(this.owner.peer(from, message, this.options.nowMs()));
  }

  /**
   * The owner's timers. Not while the journal is stuck (nothing made durable for a resend interval): every
   * message a tick makes (resends, fate questions, timeouts' answers) would only wait behind the stuck record,
   * and a tick every few milliseconds would pile them up for as long as the disk stalls. They are made once
   * it moves again.
   */
  tick(): void {
    const nowMs = this.options.nowMs();
    if (this.#isClosing) return;
    if (this.#waitingSinceMs !== null && nowMs - this.#waitingSinceMs >= this.options.limits.resendMs) return;
    this.#take(this.owner.tick(nowMs));
  }

  /** What credit key `key` was used for, if this owner (its key's owner) decided it: from the book, else LMDB. */
  creditKeyUse(key: string): CreditKeyUse | undefined {
    return this.owner.book.creditKeys.get(key) ?? this.#storedCreditKey(key);
  }

  #storedCreditKey(key: string): CreditKeyUse | undefined {
    const record = this.#readModel?.get('credits', key);
    if (record === undefined) return undefined;
    const { account, amountMicros } = storedCreditKeyUse(record);
    return { account, amountMicros: BigInt(amountMicros) };
  }

  /** A record of the read model as this owner last wrote it (its facts and its ledger), written or not yet. */
  readModel<N extends DbName>(db: N, key: string): RecordTypes[N] | undefined {
    assert.ok(this.#readModel !== null, 'an owner without a read model reads none');
    return this.#readModel.get(db, key);
  }

  /**
   * Resolves once the read model (LMDB) holds everything this owner decided before the call: what a view of
   * LMDB must wait for to show a caller its own acknowledged writes (read-model-feed.ts barrier).
   */
  readModelBarrier(): Promise<void> {
    assert.ok(this.#readModel !== null, 'an owner without a read model has no barrier');
    return this.#readModel.barrier(this.#headSeq);
  }

  /** Read model writes of durable records the writer has not taken yet (0 without a read model). */
  get readModelWaitingWrites(): number {
    return this.#readModel?.waitingWrites ?? 0;
  }

  /** The read model's writer committed: it may take more of what waits (its `onApplied`); keys it holds are forgotten. */
  readModelApplied(): void {
    if (this.#readModel === null) return;
    this.#readModel.drain();
    const applied = this.#readModel.sink.appliedSeq;
    let forgotten = 0;
    for (const { seq, key } of this.#recentCreditKeys) {
      if (seq > applied) break;
      this.owner.book.forgetCreditKey(key);
      forgotten++;
    }
    if (forgotten > 0) this.#recentCreditKeys.splice(0, forgotten);
  }

  /** Flushes what was appended (its outputs leave), then closes the journal; takes no input after (#isClosing). */
  close(): Promise<void> {
    this.#isClosing = true;
    return this.#journal.close();
  }

  /** `isApplied`: the effects are already in the book (a first record built beside it). */
  #take(step: Step, isApplied = false): void {
    if (step.effects.length > 0) {
      if (isApplied) for (const effect of step.effects) this.owner.book.apply(effect);
      const seq = this.#journal.append(encodeEffects(step.effects));
      // Calls are refused well before this (`call`); peers' messages and ticks are bounded by the calls.
      if (seq === null) return this.options.onFailure(new Error('journal full: the disk is far behind'));
      this.#headSeq = seq;
      this.#waitingSinceMs ??= this.options.nowMs();
      if (this.#readModel !== null) {
        this.#readModel.add(seq, readModelWrites(step.effects, this.owner.book));
        for (const effect of step.effects) if (effect.t === 'credit_key') this.#recentCreditKeys.push({ seq, key: effect.key });
      }
      if (seq >= this.#snapshotDueSeq && !this.#isSnapshotting) this.#snapshot(seq);
    }
    if (step.outputs.length === 0) return;
    if (this.#headSeq <= this.#durableSeq) return this.options.release(step.outputs);
    const asks = step.outputs.filter(isAskOnly);
    if (asks.length > 0) this.options.release(asks);
    const decided = asks.length === 0 ? step.outputs : step.outputs.filter((output) => !isAskOnly(output));
    if (decided.length > 0) this.#gated.push({ seq: this.#headSeq, outputs: decided });
  }

  #onDurable(seq: number): void {
    this.#durableSeq = seq;
    this.#waitingSinceMs = seq >= this.#headSeq ? null : this.options.nowMs();
    this.#readModel?.durable(seq);
    let released = 0;
    while (released < this.#gated.length && this.#gated[released]!.seq <= seq) this.options.release(this.#gated[released++]!.outputs);
    this.#gated.splice(0, released);
  }

  /**
   * The book is the state after record `seq` (just appended, maybe not yet durable): its small parts are
   * encoded now, its accounts from now on in slices of SNAPSHOT_SLICE_ACCOUNTS between the owner's turns
   * (Book.beginAccountsSnapshot keeps each account as it was at `seq` while it changes), so the owner is never
   * stopped for the whole book: 100,000 accounts took 230-400 ms in one piece. The journal goes on in a new file
   * from `seq + 1`, and the snapshot is written once the old file is durable and closed and the accounts are
   * encoded (a snapshot never holds what the journal could still lose). Until the old file is closed the new
   * file's durability reports wait, so outputs leave in seq order across the two files.
   */
  #snapshot(seq: number): void {
    const previous = this.#journal;
    let isPreviousClosed = false;
    let heldDurableSeq = 0;
    let next: Journal;
    try {
      next = Journal.open(
        join(this.options.dir, seqName('journal', seq + 1)),
        {
          maxPendingBytes: Math.max(2 * this.options.maxPendingBytes, 4 << 20),
          preallocateBytes: 0,
          onDurable: (durable) => {
            if (isPreviousClosed) this.#onDurable(durable);
            else heldDurableSeq = durable;
          },
          onFailure: (error) => this.options.onFailure(error),
        },
        () => assert.fail('a new journal file has no records'),
        seq + 1,
      ).journal;
    } catch (error) {
      // A full disk: the journal goes on in its file, and the snapshot is tried again a little later.
      if (!isOutOfSpace(error as NodeJS.ErrnoException)) throw error;
      return this.#snapshotRefused(seq);
    }
    this.#isSnapshotting = true;
    this.#journal = next;
    const { book } = this.owner;
    const head = snapshotHead(book, seq);
    const accounts = this.#encodeAccounts(book.beginAccountsSnapshot());
    // The old file's last groups wait for space on a full disk, as the journal's writes always do.
    void previous
      .close({ waitForSpace: true })
      .then(() => {
        isPreviousClosed = true;
        if (heldDurableSeq > 0) this.#onDurable(heldDurableSeq);
        return accounts;
      })
      .then((slices) => this.#writeSnapshot(seq, snapshotChunks(head, slices)))
      .then(
        () => {
          this.#snapshotDueSeq = seq + this.options.snapshotEveryRecords;
          this.#isSnapshotting = false;
        },
        (error: unknown) => {
          // A snapshot the disk had no room for is only a later start's shortcut: the journal since the last
          // one is kept whole (both files), so a restart replays it, and the snapshot is tried again.
          if (isOutOfSpace(error as NodeJS.ErrnoException)) {
            this.#isSnapshotting = false;
            return this.#snapshotRefused(seq);
          }
          this.options.onFailure(error instanceof Error ? error : new Error(String(error)));
        },
      );
  }

  /** A snapshot at `seq` the disk refused: tried again a quarter of the interval later. */
  #snapshotRefused(seq: number): void {
    this.#snapshotDueSeq = seq + Math.max(1, Math.floor(this.options.snapshotEveryRecords / 4));
  }

  /** The snapshot's account rows, a slice a turn; the book stops keeping their old buckets once all are read. */
  async #encodeAccounts(accounts: AccountsAtSnapshot): Promise<string[]> {
    const slices: string[] = [];
    const rows = accounts.entries();
    const sliceAccounts = this.options.snapshotSliceAccounts ?? SNAPSHOT_SLICE_ACCOUNTS;
    try {
      for (;;) {
        const slice: Array<[AccountId, Buckets]> = [];
        for (let next = rows.next(); !next.done; next = rows.next()) {
          slice.push(next.value);
          if (slice.length === sliceAccounts) break;
        }
        slices.push(accountRowsJson(slice));
        if (slice.length < sliceAccounts) return slices;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.owner.book.endAccountsSnapshot();
    }
  }

  async #writeSnapshot(seq: number, chunks: readonly string[]): Promise<void> {
    const { dir } = this.options;
    const temporary = join(dir, `${seqName('snapshot', seq)}.tmp`);
    const file = await open(temporary, 'w', 0o600);
    try {
      for (const chunk of chunks) await file.write(chunk);
      await file.datasync();
    } catch (error) {
      await file.close();
      rmSync(temporary, { force: true }); // a part of a snapshot is never read, and takes room
      throw error;
    }
    await file.close();
    await rename(temporary, join(dir, seqName('snapshot', seq)));
    syncDirectory(dir);
    this.#removeOld();
  }

  /**
   * Keeps the newest snapshot a restart could load (the newest the read model has passed) and the journal
   * from it on; older snapshots and the journal files wholly before it go.
   */
  #removeOld(): void {
    const { dir } = this.options;
    const names = readdirSync(dir);
    const passed = this.#readModel?.sink.appliedSeq ?? Infinity;
    const kept = names.flatMap((name) => seqOf(name, 'snapshot') ?? []).filter((seq) => seq <= passed);
    if (kept.length === 0) return;
    const base = Math.max(...kept);
    for (const name of names) {
      const snapshot = seqOf(name, 'snapshot');
      const journal = seqOf(name, 'journal');
      if ((snapshot !== null && snapshot < base) || (journal !== null && journal <= base && this.#isFileBefore(names, journal, base)))
        rmSync(join(dir, name), { force: true });
    }
  }

  /** The journal file starting at `first` holds only records up to `seq`: another file starts after it, by then. */
  #isFileBefore(names: string[], first: number, seq: number): boolean {
    return names.some((name) => {
      const other = seqOf(name, 'journal');
      return other !== null && other > first && other <= seq + 1;
    });
  }
}
