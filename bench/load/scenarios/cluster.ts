// Scenario `cluster` (opt-in: it needs Debian's nats-server): the unsigned ladder (10 quoting makers, the
// ladder's own users and markets) against one process and against a cluster on this machine, alternated
// (BENCH_CLUSTER_PAIRS pairs, default 1): a nats-server, two shard nodes (src/cluster/shard-node-main.ts: node
// a partitions 0-127, node b 128-255, one owner each: one owner thread per node on this 2-core machine), a
// coordinator, and two gateways that keep nothing (PARLAYD_ROLE=gateway) in front of it, over which the
// ladder spreads its RFQs (in turn) and its makers (half each); its users, makers and markets are made through
// the first (forwarded to the coordinator). Per step, server CPU µs per completed RFQ of each role, from
// /proc: each gateway, the coordinator, each shard node, nats-server; and the p50 each side reached at each
// rate, the hop's price (docs/scaling.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { NatsServer, natsServerBinary } from '../../../test/helpers/nats-server.js';
import { ListeningProcess } from '../../micro/cluster-processes.js';
import { runLadder, type LadderResult, type LadderStep } from './rfq-ladder.js';
import { BENCH_ENV, startParlayd, type BenchServer } from '../server.js';
import type { RunContext, Scenario } from './context.js';

const SHARD_NODE = fileURLToPath(new URL('../../../src/cluster/shard-node-main.js', import.meta.url));
const SERVICE = fileURLToPath(new URL('../../../src/main.js', import.meta.url));
const MAP_TEXT = ['0-127', '128-255'];
const SHARD_NODES = [
  { name: 'nodeA', partitions: '0-127' },
  { name: 'nodeB', partitions: '128-255' },
] as const;

/** One rate's figures of one side: what it completed, its p50, and CPU µs per completed RFQ by process. */
export interface ClusterStep {
  ratePerS: number;
  completedPerS: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRfq: Record<string, number>;
}

export interface ClusterSide {
  steps: ClusterStep[];
  peakPerS: number;
}

export interface ClusterResult {
  rates: number[];
  /** Each sitting alternated: the single process, then the cluster. */
  sittings: Array<{ single: ClusterSide; cluster: ClusterSide }>;
}

/** The ladder's steps as µs of CPU per completed RFQ: the service's own process as `gateway` (or `service`). */
function sideOf(ladder: LadderResult, serviceName: string): ClusterSide {
  return {
    peakPerS: ladder.peakPerS,
    steps: ladder.steps.map((step: LadderStep) => {
      const perRfq = (cpuMs: number) => Math.round((cpuMs * 1000) / Math.max(1, step.completed));
      // The service's share over the step's meter (its wall time is the step's, within a few ms).
      const cpuUsPerRfq: Record<string, number> = { [serviceName]: perRfq((step.cpu.serverPercent / 100) * step.seconds * 1000) };
      for (const [name, ms] of Object.entries(step.processCpuMs ?? {})) cpuUsPerRfq[name] = perRfq(ms);
      return {
        ratePerS: step.offeredPerS,
        completedPerS: step.throughputPerS,
        p50Ms: step.latency.p50Ms,
        p99Ms: step.latency.p99Ms,
        cpuUsPerRfq,
      };
    }),
  };
}

async function clusterLadder(ctx: RunContext, rates: number[], natsBinary: string): Promise<LadderResult> {
  const root = mkdtempSync(join(tmpdir(), 'parlayd-bench-cluster-'));
  const nats = await NatsServer.start(natsBinary);
  const nodes: ListeningProcess[] = [];
  let second: BenchServer | null = null;
  try {
    for (const node of SHARD_NODES) {
      nodes.push(
        await ListeningProcess.start(
          node.name,
          SHARD_NODE,
          {
            PARLAYD_NATS_URL: nats.url,
            PARLAYD_PARTITIONS: node.partitions,
            PARLAYD_PARTITION_MAP: MAP_TEXT.join(';'),
            PARLAYD_DATA_DIR: join(root, node.name),
            PARLAYD_LOG_LEVEL: 'info', // its `listening` line is at info
          },
          ctx.serverNodeArgs,
        ),
      );
    }
    const cluster = {
      PARLAYD_NATS_URL: nats.url,
      PARLAYD_PARTITION_MAP: MAP_TEXT.join(';'),
      PARLAYD_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    };
    nodes.push(
      await ListeningProcess.start(
        'coordinator',
        SERVICE,
        // The service's bench settings: it is the one that logs the ladder's users in and registers its makers.
        {
          ...BENCH_ENV,
          ...cluster,
          PARLAYD_ROLE: 'coordinator',
          PARLAYD_NODE_ID: 'bench-coordinator',
          PARLAYD_DATA_DIR: join(root, 'coordinator'),
          PARLAYD_PORT: '0',
          PARLAYD_HOST: '127.0.0.1',
        },
        ctx.serverNodeArgs,
      ),
    );
    const gatewayEnv = { ...cluster, PARLAYD_ROLE: 'gateway' };
    second = await startParlayd({ env: { ...gatewayEnv, PARLAYD_NODE_ID: 'bench-gateway-2' }, nodeArgs: ctx.serverNodeArgs });
    return await runLadder(ctx, 'unsigned', rates, {
      env: { ...gatewayEnv, PARLAYD_NODE_ID: 'bench-gateway' },
      processes: { ...Object.fromEntries(nodes.map((node) => [node.name, node.pid])), gateway2: second.pid, natsServer: nats.pid! },
      fronts: [second],
    });
  } finally {
    await second?.stop();
    await Promise.allSettled(nodes.map((node) => node.stop()));
    await nats.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export const cluster: Scenario<ClusterResult> = {
  name: 'cluster',
  describe:
    'the unsigned ladder against one process and against two gateways, a coordinator and two shard nodes on NATS, alternated; CPU µs per RFQ by role',
  isOptIn: true,
  async run(ctx) {
    const binary = natsServerBinary();
    if ('missing' in binary) throw new Error(binary.missing);
    const rates = ctx.isQuick ? [200] : (process.env['BENCH_RATES'] ?? '200,500,1000').split(',').map(Number);
    const pairs = Number(process.env['BENCH_CLUSTER_PAIRS'] ?? '1');
    const sittings: ClusterResult['sittings'] = [];
    for (let pair = 0; pair < pairs; pair++) {
      const single = sideOf(await runLadder(ctx, 'unsigned', rates), 'service');
      const clustered = sideOf(await clusterLadder(ctx, rates, binary.path), 'gateway');
      for (const [i, step] of clustered.steps.entries()) {
        const alone = single.steps[i];
        ctx.log(
          `cluster @${step.ratePerS}/s: p50 ${step.p50Ms} ms against ${alone?.p50Ms ?? '-'} ms in one process; ` +
            `CPU µs/RFQ ${JSON.stringify(step.cpuUsPerRfq)} against ${JSON.stringify(alone?.cpuUsPerRfq ?? {})}`,
        );
      }
      sittings.push({ single, cluster: clustered });
    }
    return { rates, sittings };
  },
};
