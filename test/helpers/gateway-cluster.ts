// A cluster for a test file: two shard nodes (test/helpers/owner-nodes.ts NODES: node a owners 0 and 64, node b
// owner 128) and the service in front of them (the default role, a coordinator, which also serves HTTP and
// makers: "the gateway" below), on the file's nats-server, each on a fresh data directory; gateways that keep
// nothing may be put in front of it (startEdge). After the test every owner is quiet, the cluster's ledger
// check is clean both through NATS and through the service's admin route, the service's own check at its
// stop too, and the owners' journals check together.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from 'ethers';
import { partitionOfName, partitionOfUser } from '../../src/cluster/partitions.js';
import type { LedgerCheck } from '../../src/ledger/check.js';
import { makerAccount } from '../../src/records/ledger.js';
import { admin } from './http.js';
import type { NatsFixture } from './nats-server.js';
import { assertClusterCheckClean, assertJournalsClean, look, MAP, MAP_TEXT, NodeProcess, NODES, waitForQuiet } from './owner-nodes.js';
import { startServer, type TestServer } from './server.js';
import { loginWallet, type TestUser } from './users.js';

export interface Cluster {
  nodes: [NodeProcess, NodeProcess];
  gateway: TestServer;
}

export interface GatewayCluster {
  /** The service as a gateway of this file's cluster, on `dataDir`, named `nodeId`, with the partition map `map`. */
  startGateway(dataDir: string, nodeId: string, map?: string): Promise<TestServer>;
  /**
   * Two shard nodes and a gateway on fresh data directories; then all stop, and everything is checked. A run
   * that replaced the gateway (killed it and started it again on its directory) returns the one now running.
   */
  withCluster(run: (cluster: Cluster) => Promise<TestServer | void>): Promise<void>;
  /** A bucket of `account` as its owner's book holds it now (0 when the account has none). */
  bucket(owner: number, account: string, name: string): Promise<bigint>;
  /**
   * A gateway that keeps nothing (PARLAYD_ROLE=gateway) in front of the cluster whose coordinator is
   * `coordinator` (the gateway withCluster starts is the coordinator: the default role), with its admin token;
   * the partition map it takes from the coordinator, unless `map` gives it one.
   */
  startEdge(coordinator: TestServer, nodeId: string, map?: string): Promise<TestServer>;
}

/**
 * `nodeSettings`: the shard nodes' extra environment (their RFQ shards read the service's settings);
 * `gatewaySettings`: the service's (the gateway withCluster starts, a coordinator); `nodesTakeMap`: the shard
 * nodes are given no partition map, take the coordinator's, and start beside it (it waits for them).
 */
export function gatewayCluster(
  fixture: NatsFixture,
  nodeSettings: Record<string, string> = {},
  gatewaySettings: Record<string, string> = {},
  { nodesTakeMap = false } = {},
): GatewayCluster {
  const startGateway = (dataDir: string, nodeId: string, map = MAP_TEXT.join(';')) =>
    startServer({
      dataDir,
      env: { ...gatewaySettings, PARLAYD_NATS_URL: fixture.server.url, PARLAYD_PARTITION_MAP: map, PARLAYD_NODE_ID: nodeId },
    });
  return {
    startGateway,
    async withCluster(run) {
      const root = mkdtempSync(join(tmpdir(), 'parlayd-cluster-'));
      const map = nodesTakeMap ? null : undefined;
      const nodes = NODES.map(
        (node) => new NodeProcess(node, join(root, node.name.replace(' ', '-')), fixture.server.url, nodeSettings, map),
      ) as [NodeProcess, NodeProcess];
      const gateways: TestServer[] = [];
      try {
        const listening = Promise.all(nodes.map((node) => node.start()));
        listening.catch(() => undefined); // awaited below, once the coordinator started (or failed to)
        if (!nodesTakeMap) await listening;
        const first = await startGateway(join(root, 'gateway-a'), 'gateway-a');
        gateways.push(first);
        await listening;
        const gateway = (await run({ nodes, gateway: first })) ?? first;
        gateways.push(gateway);
        await waitForQuiet(fixture.nc);
        await assertClusterCheckClean(fixture.nc);
        const check = await admin(gateway).get<LedgerCheck>('/v1/admin/ledger/check');
        assert.deepEqual([check.status, check.body.ok], [200, true], 'the ledger check through the gateway: every node');
        assert.equal(await gateway.stop(), 0); // and the ledger check of its own LMDB (it holds no balance: nothing to differ)
        await Promise.all(nodes.map((node) => node.stop()));
        assertJournalsClean(nodes);
      } finally {
        await Promise.allSettled(gateways.map((gateway) => gateway.kill()));
        await Promise.allSettled(nodes.map((node) => node.kill()));
        rmSync(root, { recursive: true, force: true });
      }
    },
    bucket: async (owner, account, name) => BigInt((await look(fixture.nc, owner)).accounts[account]?.[name] ?? '0'),
    startEdge: (coordinator, nodeId, map) =>
      startServer({
        env: {
          PARLAYD_NATS_URL: fixture.server.url,
          ...(map === undefined ? {} : { PARLAYD_PARTITION_MAP: map }),
          PARLAYD_NODE_ID: nodeId,
          PARLAYD_ROLE: 'gateway',
          PARLAYD_ADMIN_TOKEN: coordinator.adminToken,
        },
      }),
  };
}

/** A logged-in user whose partition is owner `owner`'s (user ids are the service's: log in until one lands there). */
export async function userOn(server: TestServer, owner: number): Promise<TestUser> {
  for (;;) {
    const user = await loginWallet(server);
    if (MAP.ownerOfPartition(partitionOfUser(user.userId)) === owner) return user;
  }
}

/** A wallet whose maker account lives with owner `owner`. */
export function makerWalletOn(owner: number): Wallet {
  for (;;) {
    const wallet = Wallet.createRandom();
    if (MAP.ownerOfPartition(partitionOfName(makerAccount(wallet.address.toLowerCase()))) === owner) return new Wallet(wallet.privateKey);
  }
}
