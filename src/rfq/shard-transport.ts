// Main thread. The seam between the shard pool and its shards: the pool only ever sends a shard batches of
// messages and receives batches of events (messages.ts), through a ShardTransport. A worker thread is the
// transport the service runs on; in-process-transport.ts runs the same actor on the calling thread (tests).
// A shard in another process or on another machine would be one more implementation: docs/architecture.md,
// "A shard on another machine", says what it would need beyond a socket.
import { inspect } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { StoredMarket } from '../contract/markets.js';
import { SHUTDOWN, type MainToShard, type ShardInit, type ShardToMain } from './messages.js';

export interface ShardEvents {
  onBatch(batch: ShardToMain[]): void;
  /** The shard is gone without being asked to stop (a crash, an exit): its in-memory state is lost. */
  onFailure(detail: { err?: unknown; exitCode?: number }): void;
  /**
   * A shard in another process can be out of reach and back (a cluster's node dies and restarts) without
   * this process failing: calls outstanding then get 503, new ones are refused until it is back.
   */
  onReachable(isReachable: boolean): void;
  /** Every market the service holds, as stored: for a transport whose shard keeps its own copy (sendMarkets). */
  allMarkets(): Iterable<StoredMarket>;
  /** Whether any maker is connected to this process now (a remote shard's door awaits its audiences only then). */
  hasMakers(): boolean;
}

export interface ShardTransport {
  /** One batch, in order, after every batch sent before it. */
  send(batch: MainToShard[]): void;
  /** A remote shard's: its door told this process has makers, before a new one hears it is authenticated. */
  announceMakers?(): Promise<void>;
  /** Stops the shard after its commit in progress; resolves once it has stopped. */
  stop(): Promise<void>;
  /**
   * Markets as the service wrote them, for a shard that does not share this process's LMDB (a cluster's node):
   * ahead of every batch sent after. Absent: the shard reads them from the shared LMDB.
   */
  sendMarkets?(markets: StoredMarket[]): void;
  /**
   * A view of what the shard owns (http/owned-views.ts), read where its records are, once they show everything
   * the shard decided before the request; for a shard that does not share this process's LMDB. Rejects with
   * a 503 when the shard does not answer in time.
   */
  readView?(name: string, args: unknown): Promise<unknown>;
}

export type ShardTransportFactory = (init: ShardInit, events: ShardEvents) => ShardTransport;

/** How long a stopping shard may take to finish its commit in progress before it is ended. */
const SHARD_STOP_GRACE_MS = 5_000;

/** A shard on its own worker thread (shard-worker.ts). */
export const workerTransport: ShardTransportFactory = (init, events) => {
  const transferList = init.peerPorts === undefined ? [] : [...init.peerPorts.values()];
  const worker = new Worker(new URL('./shard-worker.js', import.meta.url), { workerData: init, transferList });
  let isStopping = false;
  worker.on('message', (batch: ShardToMain[]) => events.onBatch(batch));
  // A thrown non-Error arrives as whatever it cloned to (seen as `err: {}` in the log): said in words instead.
  worker.on('error', (err: unknown) => events.onFailure({ err: err instanceof Error ? err : new Error(`shard threw ${inspect(err)}`) }));
  worker.on('exit', (exitCode) => {
    if (!isStopping) events.onFailure({ exitCode });
  });
  return {
    send: (batch) => worker.postMessage(batch),
    stop: () => {
      isStopping = true;
      if (worker.threadId === -1) return Promise.resolve(); // already exited
      return new Promise((resolve) => {
        const timer = setTimeout(() => void worker.terminate(), SHARD_STOP_GRACE_MS);
        worker.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        worker.postMessage(SHUTDOWN);
      });
    },
  };
};
