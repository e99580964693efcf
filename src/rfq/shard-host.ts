// The thread a shard runs on (a worker thread, or the main thread of an in-process test). Builds the actor
// over the shared LMDB environment and the engine that makes its decisions durable (rfq-durability.ts),
// holds back the first messages until the actor's recovery at start is durable (so no RFQ or movement of a
// user is decided before that user's interrupted RFQs are released), then hands every batch to the actor.
// Events leave in one batch per synchronous run.
import { Batcher } from '../lib/batcher.js';
import { systemClock } from '../lib/clock.js';
import { PeerLinks } from '../engine/peer-links.js';
import { ownerOfName } from '../engine/routing.js';
import { openStore, type Store } from '../store/db.js';
import { JournalDurability, ownerDir } from './journal-durability.js';
import { LmdbDurability } from './lmdb-durability.js';
import type { MainToShard, ShardInit, ShardToMain } from './messages.js';
import type { RfqDurability } from './rfq-durability.js';
import { RfqShard } from './shard.js';

const STATS_INTERVAL_MS = 1000;

/** What a shard decides with: the thread's LMDB environment and the engine that makes its decisions durable. */
export interface ShardEngine {
  store: Store;
  durability: RfqDurability;
}

/**
 * The shard's engine in one process: the data directory's LMDB environment, shared with the main thread, and
 * the engine PARLAYD_ENGINE names (`ownsThread` and `onFailure`: ShardHost's constructor).
 */
export function openShardEngine(init: ShardInit, ownsThread: boolean, onFailure: (error: Error) => void): ShardEngine {
  const isJournal = init.engine === 'journal';
  const store = openStore(init.dataDir, {
    isGroupCommit: ownsThread && !isJournal,
    ...(init.mapSizeBytes === undefined ? {} : { mapSizeBytes: init.mapSizeBytes }),
    ...(init.roomState === undefined ? {} : { roomState: init.roomState }),
  });
  const durability = isJournal
    ? new JournalDurability({
        store,
        dir: ownerDir(init.dataDir, init.shard),
        self: init.shard,
        ownerOf: ownerOfName(init.shardCount),
        links: (deliver) => new PeerLinks(init.shard, init.peerPorts ?? new Map(), deliver),
        readsOtherOwners: true,
        ...(init.firstRecord === undefined ? {} : { firstRecord: init.firstRecord }),
        clock: systemClock,
        onFailure,
      })
    : new LmdbDurability(store, init.shard, init.shardCount, systemClock);
  return { store, durability };
}

export class ShardHost {
  readonly #shard: RfqShard;
  readonly #durability: RfqDurability;
  #heldBatches: MainToShard[][] | null = [];
  readonly #statsTimer: NodeJS.Timeout;

  /**
   * `ownsThread`: the shard has a thread of its own (a worker), so the lmdb engine's durable writes are
   * grouped per turn and committed synchronously in it (group-commit.ts). On a thread it shares (the
   * in-process transport of tests) it commits through lmdb-js's asynchronous transactions instead, like the
   * main thread: a synchronous commit there could wait for LMDB's writer lock while lmdb-js's write thread,
   * holding it, waits for that same thread to run the main thread's transaction: a deadlock, seen as a test
   * that never ended. The journal engine never commits LMDB on the shard's thread (its read model is written
   * by lmdb-js's write thread).
   *
   * `onFailure`: the journal engine's journal, snapshot or read model failed for good; the shard must stop.
   *
   * `engine`: the store and durability it decides with; a shard node of a cluster brings its own (its LMDB
   * environment, its owner linked over NATS: cluster/shard-node-worker.ts).
   */
  constructor(
    init: ShardInit,
    emitBatch: (batch: ShardToMain[]) => void,
    ownsThread = true,
    onFailure: (error: Error) => void = fail,
    engine: ShardEngine = openShardEngine(init, ownsThread, onFailure),
  ) {
    const { store } = engine;
    this.#durability = engine.durability;
    const out = new Batcher<ShardToMain>(emitBatch);
    this.#shard = new RfqShard(store, this.#durability, init, (message) => out.add(message));
    this.#statsTimer = setInterval(() => {
      // A shard's commits are its flushes, the count the storage work is about.
      const { commits, transactions } = this.#durability.takeCommitCounts();
      out.add({ kind: 'stats', activeRfqs: this.#shard.activeCount, commits, commitTransactions: transactions });
    }, STATS_INTERVAL_MS).unref();
    // A failure here is a bug or a store that cannot be written: it throws out of this thread's turn, which
    // crashes the shard, and the main thread stops the process (shard-pool.ts).
    void this.#shard.failInterrupted().then((failedRfqs) => {
      const held = this.#heldBatches ?? [];
      this.#heldBatches = null;
      out.add({ kind: 'ready', failedRfqs });
      for (const batch of held) this.#handle(batch);
    });
  }

  deliver(batch: MainToShard[]): void {
    if (this.#heldBatches !== null) this.#heldBatches.push(batch);
    else this.#handle(batch);
  }

  stopTimers(): void {
    clearInterval(this.#statsTimer);
  }

  /** The service stops: what the shard decided is made durable (the journal engine's journal and read model). */
  async close(): Promise<void> {
    this.stopTimers();
    await this.#durability.close();
  }

  #handle(batch: MainToShard[]): void {
    for (const message of batch) this.#shard.handle(message);
  }
}

function fail(error: Error): never {
  throw error;
}
