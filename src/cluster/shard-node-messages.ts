// Any thread. What a shard node's main thread (shard-node-main.ts) and its owners' threads
// (shard-node-worker.ts) tell each other: the worker's start, its reports, the request to stop.
import type { MessagePort } from 'node:worker_threads';
import type { OwnerRecovery } from '../engine/owner-host.js';
import type { ShardInit } from '../rfq/messages.js';

/** The RFQ shard's settings, the service's (config.ts: PARLAYD_QUOTE_WINDOW_MS and the others). */
export type RfqSettings = Pick<ShardInit, 'quoteWindowMs' | 'lastLookMs' | 'maxFinalizingMs' | 'maxActiveRfqs' | 'createCoalesceMs'>;

export interface OwnerWorkerInit {
  natsServers: string[];
  dataDir: string;
  owner: number;
  /** The cluster's partition map: each owner's partitions. */
  map: string[];
  /** Its end of a port to each other owner of the node, by owner (cluster/node-links.ts): transferred. */
  peerPorts: Map<number, MessagePort>;
  snapshotEveryRecords: number;
  logLevel: string;
  rfq: RfqSettings;
}

/** From the worker to its parent: it takes calls (after replaying its journal), or it has stopped. */
export type OwnerWorkerReport = { kind: 'listening'; owner: number; recovery: OwnerRecovery } | { kind: 'stopped' };

/** From the parent: stop once what the owner decided is durable. */
export const STOP = 'stop';
