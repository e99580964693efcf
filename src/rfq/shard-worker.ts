// Entry point of one RFQ shard worker thread (shard-transport.ts starts it): a ShardHost fed by the thread's
// port. A throw in the actor is a bug: it crashes this thread, and the main thread stops the process.
import { parentPort, workerData } from 'node:worker_threads';
import { SHUTDOWN, type MainToShard, type ShardInit } from './messages.js';
import { ShardHost } from './shard-host.js';
import { announceThread } from '../lib/thread-announce.js';
import { crashLater } from '../lib/fatal.js';

const port = parentPort;
if (port === null) throw new Error('shard-worker must run as a worker thread');
const init = workerData as ShardInit;
announceThread(`shard-${init.shard}`);
// A journal that cannot be written is fatal: the thread stops, and the main thread stops the process.
const host = new ShardHost(init, (batch) => port.postMessage(batch), true, crashLater);

port.on('message', (batch: MainToShard[] | typeof SHUTDOWN) => {
  // A journal that failed closes rejected; its failure stopped the thread already (onFailure), so exit anyway.
  if (batch === SHUTDOWN) return void setImmediate(() => void host.close().then(exit, exit));
  host.deliver(batch);
});

/**
 * The service is stopping. Run from an immediate queued after this turn's group commit (group-commit.ts),
 * so that commit is done, and outside any LMDB call, once the journal engine has flushed its journal and its
 * read model (ShardHost.close). RFQs still active stay marked so in LMDB: the next
 * start fails them and releases their wagers (RfqShard.failInterrupted), as after a crash. (Worker.terminate()
 * instead could stop the thread inside a commit, and then the thread never finished exiting: the service
 * hung on SIGTERM, seen as a test that never ended.)
 */
function exit(): void {
  process.exit(0); // in a worker thread: ends this thread only
}
