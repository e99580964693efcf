// Entry point of one RFQ shard worker thread. Opens the shared LMDB environment (lmdb-js shares one env
// per process across threads), builds the actor, and moves message batches in and out. A throw in the actor
// is a bug: it crashes this thread, and the main thread stops the process (shard-pool.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/db.js';
import { Batcher } from '../batcher.js';
import { SHUTDOWN, type MainToShard, type ShardInit, type ShardToMain } from './messages.js';
import { RfqShard } from './shard.js';

const STATS_INTERVAL_MS = 1000;

const port = parentPort;
if (port === null) throw new Error('shard-worker must run as a worker thread');
const init = workerData as ShardInit;
// The shard owns this thread: its durable writes are grouped per turn and committed in it (group-commit.ts).
const store = openStore(init.dataDir, { isGroupCommit: true });
const out = new Batcher<ShardToMain>((batch) => port.postMessage(batch));
const shard = new RfqShard(store, init, (message) => out.add(message));

port.on('message', (batch: MainToShard[] | typeof SHUTDOWN) => {
  if (batch === SHUTDOWN) return void setImmediate(exit);
  for (const message of batch) shard.handle(message);
});

/**
 * The service is stopping. Run from an immediate queued after this turn's group commit (group-commit.ts),
 * so that commit is done, and outside any LMDB call. RFQs still active stay marked so in LMDB: the next
 * start fails them and releases their wagers (recovery.ts), as after a crash. (Worker.terminate() instead
 * could stop the thread inside a commit, and then the thread never finished exiting: the service hung on
 * SIGTERM, seen as a test that never ended.)
 */
function exit(): void {
  process.exit(0); // in a worker thread: ends this thread only
}
setInterval(() => out.add({ kind: 'stats', activeRfqs: shard.activeCount }), STATS_INTERVAL_MS).unref();
