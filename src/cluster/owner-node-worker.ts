// Entry point of one owner's worker thread on a shard node (owner-node-main.ts starts one per owner of the
// node's partitions): an OwnerNode with a NATS connection of its own, so the node's owners use its cores and
// none waits for another's turn. Tells its parent `listening` once its subscriptions are on the server, and
// stops when asked once what it decided is durable. A failed journal or read model ends the thread (exit 70),
// which the parent takes as the node's failure.
import { parentPort, workerData } from 'node:worker_threads';
import { connect } from 'nats';
import { announceThread } from '../lib/thread-announce.js';
import { createLogger } from '../lib/log.js';
import { natsOptions } from './nats-options.js';
import { OwnerNode } from './owner-node.js';
import { PartitionMap } from './partitions.js';
import { STOP, type OwnerWorkerInit, type OwnerWorkerReport } from './owner-worker-messages.js';

const port = parentPort;
if (port === null) throw new Error('owner-node-worker must run as a worker thread');
const init = workerData as OwnerWorkerInit;
announceThread(`owner-${init.owner}`);
const log = createLogger(init.logLevel).child({ owner: init.owner });
const nc = await connect({ servers: init.natsServers, ...natsOptions(`owner-${init.owner}`) });
const node = new OwnerNode({
  nc,
  dataDir: init.dataDir,
  owner: init.owner,
  map: PartitionMap.of(init.map),
  limits: { lockTimeoutMs: 2_000, lockQueryMs: 2_000, resendMs: 100, resendPerTick: 256 },
  tickMs: 20,
  snapshotEveryRecords: init.snapshotEveryRecords,
  maxPendingBytes: 2 << 20,
  log,
  nowMs: () => Date.now(),
  onFailure: (error) => {
    log.fatal({ err: error }, 'the owner failed: stopping');
    process.exit(70); // in a worker: ends this thread, and its parent the node
  },
});
await nc.flush(); // its subscriptions are on the server: calls reach it from here on
port.postMessage({ kind: 'listening', owner: init.owner, recovery: node.recovery } satisfies OwnerWorkerReport);
port.on('message', (message: unknown) => {
  if (message !== STOP) return;
  void node
    .close()
    .then(() => nc.drain())
    .then(() => port.postMessage({ kind: 'stopped' } satisfies OwnerWorkerReport));
});
