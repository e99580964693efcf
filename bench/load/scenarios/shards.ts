// Scenario `shards`: the same unsigned RFQ load (10 quoting makers, 16 users, closed loop of 128 callers,
// wait_ms until terminal) against 1, 2 and 4 shard workers, a fresh server each: what splitting the RFQ
// actors over threads buys on this machine.
import { fundedUsers, openMarkets, registerMakers } from '../fixtures.js';
import { runClosedLoop, type ClosedLoopResult } from '../closed-loop.js';
import { httpTarget } from '../http-client.js';
import { MakerFarm } from '../makers.js';
import { CREDIT_MICROS, isTerminalWith, postRfq, prepareUnsigned } from '../rfq-traffic.js';
import { startServerFor, stepMs, type Scenario } from './context.js';

const CONCURRENCY = 128;

export interface ShardStep extends ClosedLoopResult {
  shards: number;
}

export interface ShardsResult {
  makers: number;
  steps: ShardStep[];
}

export const shards: Scenario<ShardsResult> = {
  name: 'shards',
  describe: 'completed RFQ/s with 1, 2 and 4 shard workers (10 quoting makers, closed loop)',
  async run(ctx) {
    const steps: ShardStep[] = [];
    for (const shardCount of [1, 2, 4]) {
      const server = await startServerFor(ctx, { PARLAYD_SHARDS: String(shardCount) });
      const target = httpTarget(server.baseUrl, CONCURRENCY);
      const farm = new MakerFarm();
      try {
        const users = await fundedUsers(server, 16, CREDIT_MICROS);
        const markets = await openMarkets(server, 12);
        await farm.connect(server, await registerMakers(server, 10), 10);
        await farm.setPolicy('quote');
        const prepared = prepareUnsigned(users, markets, ctx.isQuick ? 20_000 : 80_000, 2000);
        const result = await runClosedLoop({
          concurrency: CONCURRENCY,
          durationMs: stepMs(ctx, 6000),
          warmupMs: stepMs(ctx, 1500, 300),
          request: async (i) => isTerminalWith(await postRfq(target.pool, prepared[i % prepared.length]!), 'completed'),
          serverPid: server.pid,
        });
        steps.push({ shards: shardCount, ...result });
        ctx.log(
          `shards=${shardCount}: ${result.reqPerS} RFQ/s completed (p50 ${result.latency.p50Ms} p99 ${result.latency.p99Ms} ms), errors ${result.errors}`,
        );
      } finally {
        await farm.close().catch(() => undefined);
        await target.close();
        await server.stop();
      }
    }
    return { makers: 10, steps };
  },
};
