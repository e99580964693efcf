// Scenario `fanout`: 1, 10, 100 and 1,000 connected makers. Latency from admission to the last maker
// receiving: the client notes the epoch time just before it sends the POST, every maker connection notes
// when the rfq frame reached it (maker worker, its own event loop), and the figure is last receipt - send.
// RFQs are sampled one at a time with makers declining, so each ends as soon as all have answered and no
// RFQ queues behind another. Then a closed-loop phase measures RFQ/s and maker deliveries/s at each N.
import { fundedUsers, openMarkets, registerMakers } from '../fixtures.js';
import { LatencyHistogram, type LatencySummary } from '../histogram.js';
import { runClosedLoop } from '../closed-loop.js';
import { httpTarget } from '../http-client.js';
import { MakerFarm, nowEpochMs } from '../makers.js';
import { CREDIT_MICROS, isTerminalWith, postRfq, prepareUnsigned, requestIdOf } from '../rfq-traffic.js';
import { startServerFor, stepMs, type Scenario } from './context.js';

const WAIT_MS = 5000;
/** Client threads receiving the fan-out: with one, 1,000 frames queue behind each other in the client. */
const FARM_WORKERS = 4;

export interface FanoutStep {
  makers: number;
  samples: number;
  missedReceipts: number;
  /** POST sent -> last maker received the rfq, ms. */
  lastMaker: LatencySummary;
  /** POST sent -> first maker received it, ms. */
  firstMaker: LatencySummary;
  /** Server side, mean ms the main thread spent publishing one rfq to every maker (parlayd_rfq_fanout_seconds). */
  serverBroadcastMs: number;
  /** Closed loop (32 callers, wait_ms until terminal), makers declining. */
  rfqPerS: number;
  deliveriesPerS: number;
  errors: number;
}

export interface FanoutResult {
  steps: FanoutStep[];
}

/** The server's own fan-out histogram (sum and count) from GET /metrics (admin bearer). */
async function serverBroadcastSeconds(server: { baseUrl: string; adminToken: string }): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(server.baseUrl + '/metrics', { headers: { authorization: `Bearer ${server.adminToken}` } })).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { sum: read('parlayd_rfq_fanout_seconds_sum'), count: read('parlayd_rfq_fanout_seconds_count') };
}

export const fanout: Scenario<FanoutResult> = {
  name: 'fanout',
  describe: 'admission -> last maker receiving, and RFQ/s, with 1, 10, 100 and 1,000 connected makers',
  async run(ctx) {
    const server = await startServerFor(ctx);
    const target = httpTarget(server.baseUrl);
    const farm = new MakerFarm(Number(process.env['BENCH_FANOUT_WORKERS'] ?? FARM_WORKERS));
    try {
      const users = await fundedUsers(server, 8, CREDIT_MICROS);
      const markets = await openMarkets(server, 8);
      const makerWallets = await registerMakers(server, 20);
      const steps: FanoutStep[] = [];
      let connected = 0;
      for (const makers of process.env['BENCH_FANOUT_MAKERS']?.split(',').map(Number) ??
        (ctx.isQuick ? [1, 10, 100] : [1, 10, 100, 1000])) {
        const added = await farm.connect(server, makerWallets, makers - connected, 32);
        connected = added.connected;
        if (connected !== makers) throw new Error(`fanout: ${connected} makers connected, wanted ${makers}`);
        await farm.setPolicy('decline', true);
        const samples = ctx.isQuick ? 20 : 300;
        const lastMaker = new LatencyHistogram();
        const firstMaker = new LatencyHistogram();
        let missedReceipts = 0;
        // Warm-up: a few RFQs through the same path first.
        const prepared = prepareUnsigned(users, markets, samples + 10, WAIT_MS);
        const broadcastBefore = await serverBroadcastSeconds(server);
        for (let i = 0; i < prepared.length; i++) {
          const sentMs = nowEpochMs();
          const answer = await postRfq(target.pool, prepared[i]!);
          if (!isTerminalWith(answer, 'timeout')) throw new Error(`fanout RFQ: ${answer.status} ${answer.text}`);
          const receipt = await farm.receipt(requestIdOf(answer));
          if (i < 10) continue;
          if (receipt === null || receipt.count !== makers) {
            missedReceipts++;
            continue;
          }
          lastMaker.recordMs(receipt.lastMs - sentMs);
          firstMaker.recordMs(receipt.firstMs - sentMs);
        }
        const broadcastAfter = await serverBroadcastSeconds(server);
        const serverBroadcastMs =
          Math.round(((broadcastAfter.sum - broadcastBefore.sum) / Math.max(1, broadcastAfter.count - broadcastBefore.count)) * 1e6) / 1000;
        await farm.setPolicy('decline', false);
        const load = prepareUnsigned(users, markets, ctx.isQuick ? 10_000 : 60_000, WAIT_MS);
        const throughput = await runClosedLoop({
          concurrency: 32,
          durationMs: stepMs(ctx, 3000),
          warmupMs: stepMs(ctx, 500, 200),
          request: async (i) => isTerminalWith(await postRfq(target.pool, load[i % load.length]!), 'timeout'),
        });
        const step: FanoutStep = {
          makers,
          samples,
          missedReceipts,
          lastMaker: lastMaker.summary(),
          firstMaker: firstMaker.summary(),
          serverBroadcastMs,
          rfqPerS: throughput.reqPerS,
          deliveriesPerS: throughput.reqPerS * makers,
          errors: throughput.errors,
        };
        steps.push(step);
        ctx.log(
          `fanout ${makers} makers: last maker p50 ${step.lastMaker.p50Ms} p99 ${step.lastMaker.p99Ms} max ${step.lastMaker.maxMs} ms; ` +
            `server broadcast ${step.serverBroadcastMs} ms; ${step.rfqPerS} RFQ/s = ${step.deliveriesPerS} deliveries/s`,
        );
      }
      return { steps };
    } finally {
      await farm.close().catch(() => undefined);
      await target.close();
      await server.stop();
    }
  },
};
