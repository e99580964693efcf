// The owner's thread. What an owner's journal records write to its read model (read-model.ts), on their way to
// the read model's writer (store/write-behind.ts). A record's writes are handed on only once the journal holds
// it durably: LMDB must never show a record that a crash could still take back (its appliedSeq would then
// name a seq the restarted owner gives to another record). They wait here meanwhile, and also while the writer
// is full (a slow disk): the writer takes more when it has committed (`onApplied` calls `drain`). The owner
// refuses new calls while this backlog is past its bound (`isBehind`), as it does when its journal is behind.
import assert from 'node:assert/strict';
import type { DbName } from '../store/db.js';
import type { RecordTypes } from '../store/records.js';
import type { BlindWrite } from '../store/records.js';

/** The read model's writer, as the owner sees it (WriteBehind is one). */
export interface ReadModelSink {
  /** Every write up to this seq is in LMDB. */
  readonly appliedSeq: number;
  hasRoom(writeCount: number): boolean;
  /** False, taking nothing, when it holds too much already. */
  write(seq: number, writes: readonly BlindWrite[]): boolean;
  /** Its latest write of the key if not yet committed, else LMDB's. */
  get<N extends DbName>(db: N, key: string): RecordTypes[N] | undefined;
  /** Resolves once everything it took before the call is committed, committing at once. */
  flush(): Promise<void>;
}

export class ReadModelFeed {
  readonly #waiting: Array<{ seq: number; writes: BlindWrite[] }> = [];
  /** The latest waiting write of each key (database and key), and its record's seq: `get` in one look-up. */
  readonly #latest = new Map<string, { seq: number; value: unknown }>();
  /** Barriers waiting for every record up to `seq` to be handed on. */
  #barriers: Array<{ seq: number; resolve: () => void }> = [];
  #waitingWrites = 0;
  #durableSeq: number;

  constructor(
    readonly sink: ReadModelSink,
    /** Writes waiting here past which the owner refuses new calls. */
    private readonly maxWaitingWrites: number,
    /** What the journal held when the owner opened it: durable already. */
    durableSeq: number,
  ) {
    this.#durableSeq = durableSeq;
  }

  /** The owner's calls wait: the read model is too far behind its journal. */
  get isBehind(): boolean {
    return this.#waitingWrites > this.maxWaitingWrites;
  }

  get waitingWrites(): number {
    return this.#waitingWrites;
  }

  /**
   * The owner reads its own writes: the latest waiting here, else the writer's (which looks in LMDB last). A
   * record is answered for once durable, and may still wait here then.
   */
  get<N extends DbName>(db: N, key: string): RecordTypes[N] | undefined {
    const latest = this.#latest.get(latestKey(db, key));
    return latest !== undefined ? (latest.value as RecordTypes[N] | undefined) : this.sink.get(db, key);
  }

  /** The writes of journal record `seq`, in seq order. */
  add(seq: number, writes: BlindWrite[]): void {
    assert.ok(this.#waiting.length === 0 || this.#waiting.at(-1)!.seq < seq, `read model writes of ${seq} out of order`);
    if (writes.length === 0) return;
    this.#waiting.push({ seq, writes });
    this.#waitingWrites += writes.length;
    for (const { db, key, value } of writes) this.#latest.set(latestKey(db, key), { seq, value });
    this.drain();
  }

  /** The journal is durable up to `seq`. */
  durable(seq: number): void {
    this.#durableSeq = seq;
    this.drain();
  }

  /**
   * A read barrier: resolves once LMDB holds every record up to `seq` (the owner's head when a reader asked),
   * so a view read after it shows what the owner had decided by then. Commits at once rather than at the
   * writer's interval: a few milliseconds (one LMDB commit), paid only by the reads that ask.
   */
  async barrier(seq: number): Promise<void> {
    if ((this.#waiting[0]?.seq ?? Infinity) <= seq) await new Promise<void>((resolve) => this.#barriers.push({ seq, resolve }));
    await this.sink.flush();
  }

  /** Hands on, in order, every waiting record the journal holds durably, while the writer takes them. */
  drain(): void {
    let handed = 0;
    for (const record of this.#waiting) {
      if (record.seq > this.#durableSeq || !this.sink.write(record.seq, record.writes)) break;
      this.#waitingWrites -= record.writes.length;
      // The writer answers for these keys now, unless a later record waiting here wrote them again.
      for (const { db, key } of record.writes) {
        const id = latestKey(db, key);
        if (this.#latest.get(id)?.seq === record.seq) this.#latest.delete(id);
      }
      handed++;
    }
    if (handed > 0) this.#waiting.splice(0, handed);
    if (this.#barriers.length === 0) return;
    const firstWaiting = this.#waiting[0]?.seq ?? Infinity;
    const passed = this.#barriers.filter((barrier) => barrier.seq < firstWaiting);
    if (passed.length === 0) return;
    this.#barriers = this.#barriers.filter((barrier) => barrier.seq >= firstWaiting);
    for (const { resolve } of passed) resolve();
  }
}

/** A key of the index of waiting writes: the database, a NUL, the key (no database name holds a NUL). */
const latestKey = (db: DbName, key: string): string => `${db}\u0000${key}`;
