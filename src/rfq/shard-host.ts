// The thread a shard runs on (a worker thread, or the main thread of an in-process test). Builds the actor
// over the shared LMDB environment, holds back the first messages until the actor's recovery at start has
// committed (so no RFQ or movement of a user is decided before that user's interrupted RFQs are released),
// then hands every batch to the actor. Events leave in one batch per synchronous run.
import { Batcher } from '../batcher.js';
import { openStore } from '../store/db.js';
import type { MainToShard, ShardInit, ShardToMain } from './messages.js';
import { RfqShard } from './shard.js';

const STATS_INTERVAL_MS = 1000;

export class ShardHost {
  readonly #shard: RfqShard;
  #heldBatches: MainToShard[][] | null = [];
  readonly #statsTimer: NodeJS.Timeout;

  /**
   * `ownsThread`: the shard has a thread of its own (a worker), so its durable writes are grouped per turn
   * and committed synchronously in it (group-commit.ts). On a thread it shares (the in-process transport of
   * tests) it commits through lmdb-js's asynchronous transactions instead, like the main thread: a
   * synchronous commit there could wait for LMDB's writer lock while lmdb-js's write thread, holding it,
   * waits for that same thread to run the main thread's transaction: a deadlock, seen as a test that never
   * ended.
   */
  constructor(init: ShardInit, emitBatch: (batch: ShardToMain[]) => void, ownsThread = true) {
    const store = openStore(init.dataDir, {
      isGroupCommit: ownsThread,
      ...(init.mapSizeBytes === undefined ? {} : { mapSizeBytes: init.mapSizeBytes }),
      ...(init.roomState === undefined ? {} : { roomState: init.roomState }),
    });
    const out = new Batcher<ShardToMain>(emitBatch);
    this.#shard = new RfqShard(store, init, (message) => out.add(message));
    // Commits since the last stats: a shard's commits are its flushes, the count the storage work is about.
    const counts = store.groupCommitCounts;
    const reported = { commits: 0, transactions: 0 };
    this.#statsTimer = setInterval(() => {
      const commits = (counts?.commits ?? 0) - reported.commits;
      const commitTransactions = (counts?.transactions ?? 0) - reported.transactions;
      reported.commits += commits;
      reported.transactions += commitTransactions;
      out.add({ kind: 'stats', activeRfqs: this.#shard.activeCount, commits, commitTransactions });
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

  #handle(batch: MainToShard[]): void {
    for (const message of batch) this.#shard.handle(message);
  }
}
