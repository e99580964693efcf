// A front process's part in the cluster, a coordinator's or a gateway's (docs/scaling.md): its NATS
// connection, and what the service's shard pool
// is given to reach the RFQ shards on the shard nodes instead of starting worker threads of its own: their
// transport (nats-shard-transport.ts) and their placement by the partition map. Loaded by main.ts only
// when PARLAYD_NATS_URL is set, so one process loads nothing of NATS.
import { connect, type NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { LedgerCheck } from '../ledger/check.js';
import type { ShardPlacement, ShardPoolOptions } from '../rfq/shard-pool.js';
import { ownerByteOf } from '../rfq/ids.js';
import { natsOptions } from './nats-options.js';
import { natsShardTransport } from './nats-shard-transport.js';
import { partitionOfUser, PartitionMap } from './partitions.js';
import { checkCluster, ledgerCheckOfCluster } from './ledger-check.js';

export { askPartitionMap, mapMismatch, servePartitionMap } from './map-source.js';
export { clusterDashboardSamples } from './dashboard-samples.js';

/** An owner's part of the ledger check reads its whole read model: unanswered past this, the check is a 503. */
const CHECK_TIMEOUT_MS = 10_000;

/** For createService: the pool's transport and placement, and the cluster's ledger check. */
export type ClusterShardOptions = Required<Pick<ShardPoolOptions, 'transport' | 'placement' | 'areShardsRemote'>> & {
  checkLedger: () => Promise<LedgerCheck>;
};

/** Where each shard of the map is: an owner per partition range, users by their partition, RFQs by their id's owner. */
export function clusterPlacement(map: PartitionMap): ShardPlacement {
  return {
    shards: map.owners,
    shardOfUser: (userId) => map.ownerOfPartition(partitionOfUser(userId)),
    shardOfRequest: (requestId) => {
      const owner = ownerByteOf(requestId);
      return owner !== null && map.ownerOfPartition(owner) === owner ? owner : null;
    },
    ownerOf: map.ownerOf,
  };
}

/** The whole cluster in one owner: the map of a coordinator given none. */
export const ONE_OWNER_MAP = ['0-255'];

export function connectToCluster(cluster: NonNullable<Config['cluster']>): Promise<NatsConnection> {
  return connect({ servers: cluster.natsServers, ...natsOptions(cluster.nodeId) });
}

/**
 * The RFQ shards of the map `mapText` reached over `nc`. Throws with one line (a map that is not one) before
 * anything is sent.
 */
export function joinAsGateway(
  nc: NatsConnection,
  cluster: NonNullable<Config['cluster']>,
  mapText: readonly string[],
  log: Logger,
): ClusterShardOptions {
  const map = PartitionMap.of(mapText);
  return {
    transport: natsShardTransport({ nc, gateway: cluster.nodeId, log }),
    placement: clusterPlacement(map),
    areShardsRemote: true,
    checkLedger: async () => ledgerCheckOfCluster(await checkCluster(nc, map.owners, CHECK_TIMEOUT_MS)),
  };
}
