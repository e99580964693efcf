// Entry point of one owner's worker thread on a shard node (shard-node-main.ts starts one per owner of the
// node's partitions): the owner's RFQ shard (rfq/shard-host.ts, the same actor as in one process) behind its
// door to the gateways (shard-door.ts), deciding with the owner (rfq/journal-durability.ts: journal,
// snapshots, a read model in an LMDB environment of its own) linked to the other owners (node-links.ts: its
// node's by port, the rest over NATS), and the owner's money calls and looks (owner-node.ts). A NATS
// connection of its own, so the node's owners use its cores and none waits for another's turn. Tells its
// parent `listening` once its subscriptions are on the server, and stops when asked once what it decided is
// durable. A failed journal, read model or store ends the thread (exit 70), which the parent takes as the
// node's failure.
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { connect } from 'nats';
import { systemClock } from '../lib/clock.js';
import { announceThread } from '../lib/thread-announce.js';
import { createLogger } from '../lib/log.js';
import { JournalDurability } from '../rfq/journal-durability.js';
import { MAX_SHARDS } from '../rfq/ids.js';
import { ShardHost } from '../rfq/shard-host.js';
import { Settlement } from '../rfq/settlement.js';
import type { MoneyOp, MoneyResult } from '../ledger/money-ops.js';
import { withOracleFields } from '../markets/due-index.js';
import { openStore } from '../store/db.js';
import { NodeLinks } from './node-links.js';
import { natsOptions } from './nats-options.js';
import { OwnerNode } from './owner-node.js';
import { serveOwnedViews } from './owned-views-server.js';
import { PartitionMap } from './partitions.js';
import { ShardDoor } from './shard-door.js';
import { STOP, type OwnerWorkerInit, type OwnerWorkerReport } from './shard-node-messages.js';

const SETTLE_RETRY_MS = 1_000;

const port = parentPort;
if (port === null) throw new Error('shard-node-worker must run as a worker thread');
const init = workerData as OwnerWorkerInit;
const { owner, dataDir } = init;
announceThread(`owner-${owner}`);
const log = createLogger(init.logLevel).child({ owner });
const onFailure = (error: Error) => {
  log.fatal({ err: error }, 'the owner failed: stopping');
  process.exit(70); // in a worker: ends this thread, and its parent the node
};
const nc = await connect({ servers: init.natsServers, ...natsOptions(`owner-${owner}`) });
const map = PartitionMap.of(init.map);
// The owner's whole state is two directories (a partition's move between nodes will want that).
const store = openStore(join(dataDir, 'lmdb', `owner-${owner}`));
const durability = new JournalDurability({
  store,
  dir: join(dataDir, 'engine', `owner-${owner}`),
  self: owner,
  ownerOf: map.ownerOf,
  links: (deliver) => new NodeLinks(nc, owner, init.peerPorts, deliver, log),
  readsOtherOwners: false,
  snapshotEveryRecords: init.snapshotEveryRecords,
  clock: systemClock,
  onFailure,
});
// A shard node settles its own positions (its read model holds them) as resolved markets reach it, and at
// start whatever resolved while it was down: the same Settlement as one process's, with this owner as the
// only owner it asks.
const settlement = new Settlement(
  store,
  {
    readBarrier: () => durability.barrier().then(() => undefined),
    shardOfUser: () => owner,
    moveMoney: <R extends MoneyResult>(_shard: number, op: MoneyOp) => durability.money(op) as Promise<R>,
  },
  systemClock,
);
/** Settlement is idempotent: one that fails (the journal behind: OVERLOADED) is run again a little later. */
const settle = (run: () => Promise<number>) =>
  void run().catch((err: unknown) => {
    log.warn({ err }, 'positions of a resolved market could not be settled now: trying again');
    setTimeout(() => settle(run), SETTLE_RETRY_MS).unref();
  });
const door = new ShardDoor({
  nc,
  owner,
  ownerOf: map.ownerOf,
  store,
  log,
  nowMs: () => Date.now(),
  onFailure,
  onMarkets: (markets) => {
    for (const market of markets) if (market.status !== 'OPEN') settle(() => settlement.onMarketResolved(withOracleFields(market)));
  },
});
const host = new ShardHost({ ...init.rfq, shard: owner, shardCount: MAX_SHARDS, dataDir, engine: 'journal' }, door.emit, true, onFailure, {
  store,
  durability,
});
door.open(host);
settle(() => settlement.settleAllDue());
const node = new OwnerNode({ nc, owner, map, runtime: durability.runtime, store, log });
const views = serveOwnedViews({ nc, owner, store, barrier: () => durability.runtime.barrier(), log });
await nc.flush(); // its subscriptions are on the server: calls reach it from here on
port.postMessage({ kind: 'listening', owner, recovery: node.recovery } satisfies OwnerWorkerReport);
port.on('message', (message: unknown) => {
  if (message !== STOP) return;
  door.close();
  node.close();
  views.unsubscribe();
  void host
    .close()
    .then(() => store.close())
    .then(() => nc.drain())
    .then(() => port.postMessage({ kind: 'stopped' } satisfies OwnerWorkerReport));
});
