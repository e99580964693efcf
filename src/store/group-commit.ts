// A worker thread's store writes (the RFQ shard's). lmdb-js's asynchronous transactions run their callbacks
// on the calling thread between batches of its own write thread, which costs two thread wake-ups per
// batch and, measured at 2,000 RFQ/s, ~0.6 ms (alone) to 2.6 ms (mean, loaded) per durable write: the
// largest part of an RFQ's latency (docs/performance.md). A shard owns its thread and may block it, so here
// every transaction asked for during one event-loop turn runs in one synchronous LMDB transaction at the
// end of the turn (setImmediate: after the turn's I/O), committed and fsynced before any of them resolves.
// Each runs as a child transaction, so a throw rolls back its own writes only, as `Store.transact` promises.
// While a commit waits on the disk, new messages queue up and make the next group larger: the group size
// follows the load by itself, and the commit rate never needs to exceed what the disk sustains.
//
// Never on the main thread: a synchronous commit there would stall every socket for the fsync.
import type { RootDatabase } from 'lmdb';
import { Batcher } from '../lib/batcher.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Waiting {
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Commits made, and the transactions they held, since the store opened: each commit is one pair of flushes. */
export interface GroupCommitCounts {
  commits: number;
  transactions: number;
}

export class GroupCommit {
  readonly #waiting = new Batcher<Waiting>((group) => this.#commit(group), 'turn');
  readonly counts: GroupCommitCounts = { commits: 0, transactions: 0 };

  constructor(private readonly root: RootDatabase<unknown, string>) {}

  /** Runs `fn` in this turn's group; resolves (or rejects with fn's throw) once the group is durable. */
  transact<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => this.#waiting.add({ fn, resolve: resolve as (value: unknown) => void, reject }));
  }

  #commit(group: Waiting[]): void {
    const outcomes: Outcome[] = [];
    try {
      this.root.transactionSync(() => {
        // A nested transactionSync is an LMDB child transaction (lmdb-js): aborted alone on a throw.
        for (const { fn } of group) {
          try {
            outcomes.push({ ok: true, value: this.root.transactionSync(fn) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The commit itself failed (disk full, map full): nothing of the group was written.
      for (const waiting of group) waiting.reject(error);
      return;
    }
    this.counts.commits++;
    this.counts.transactions += group.length;
    group.forEach((waiting, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome.error);
    });
  }
}
