// Scenario `memory`: the server's resident memory (/proc/<pid>/status of the child) with 100,000 stored
// RFQs, 20,000 active ones and 1,000 connected makers. Steps, each measured after a short settle:
//   1. baseline after start and setup;
//   2. 100,000 RFQs created with no maker connected: each ends `timeout` at once and is only stored;
//   3. one silent maker connects, then 20,000 RFQs are created and stay pending (quote window 10 min):
//      (RSS 3 - RSS 2) / 20,000 = bytes per active RFQ;
//   4. 999 more silent makers connect: (RSS 4 - RSS 3) / 999 = bytes per maker connection.
// The RFQs of step 3 are created before the other makers connect, so 20,000 rfq frames are not multiplied
// by 1,000 sockets. RSS counts LMDB's file pages that were touched (RssFile) as well as the heap (RssAnon).
import { fundedUsers, openMarkets, registerMakers } from '../fixtures.js';
import { runClosedLoop } from '../closed-loop.js';
import { httpTarget } from '../http-client.js';
import { MakerFarm } from '../makers.js';
import { CREDIT_MICROS, postRfq, prepareUnsigned } from '../rfq-traffic.js';
import type { ProcessMemory } from '../server.js';
import { sleep, startServerFor, type RunContext, type Scenario } from './context.js';

const GIB = 1024 ** 3;

export interface MemoryResult {
  storedRfqs: number;
  activeRfqs: number;
  makers: number;
  baseline: ProcessMemory;
  afterStored: ProcessMemory;
  afterActive: ProcessMemory;
  afterMakers: ProcessMemory;
  bytesPerStoredRfq: number;
  bytesPerActiveRfq: number;
  bytesPerMakerConnection: number;
  rssGiB: number;
  createPerS: number;
}

export const memory: Scenario<MemoryResult> = {
  name: 'memory',
  describe: 'RSS with 100,000 stored RFQs, 20,000 active RFQs and 1,000 makers; bytes per maker and per active RFQ',
  async run(ctx: RunContext) {
    const stored = ctx.isQuick ? 5_000 : 100_000;
    const active = ctx.isQuick ? 2_000 : 20_000;
    const makers = ctx.isQuick ? 100 : 1_000;
    const server = await startServerFor(ctx, { PARLAYD_QUOTE_WINDOW_MS: '600000' });
    const target = httpTarget(server.baseUrl);
    const farm = new MakerFarm();
    try {
      const users = await fundedUsers(server, 16, CREDIT_MICROS);
      const markets = await openMarkets(server, 12);
      // Enough wallets that no address holds more sockets than PARLAYD_MM_MAX_SOCKETS_PER_MAKER (4 by default).
      const makerWallets = await registerMakers(server, Math.max(20, Math.ceil(makers / 4)), 16);
      const settle = async () => {
        await sleep(2000);
        return server.memory();
      };
      const baseline = await settle();

      const create = async (count: number, expected: (text: string) => boolean) => {
        const prepared = prepareUnsigned(users, markets, count, 0);
        return runClosedLoop({
          concurrency: 64,
          durationMs: 600_000,
          warmupMs: 0,
          request: async (i) => {
            const answer = await postRfq(target.pool, prepared[i]!);
            return answer.status === 201 && expected(answer.text);
          },
          // A fixed amount of work: durationMs is only a bound.
          stopWhen: (next) => next >= count,
        });
      };

      const storedRun = await create(stored, () => true);
      if (storedRun.errors > 0) throw new Error(`memory: ${storedRun.errors} RFQs were not created`);
      const createPerS = Math.round(stored / storedRun.seconds);
      const afterStored = await settle();
      ctx.log(`memory: ${stored} stored RFQs (${createPerS}/s): RSS ${mib(afterStored.rssBytes)} MiB`);

      await farm.setPolicy('silent');
      await farm.connect(server, makerWallets, 1);
      const activeRun = await create(active, (text) => text.includes('"status":"pending"'));
      if (activeRun.errors > 0) throw new Error(`memory: ${activeRun.errors} RFQs were not created pending`);
      const afterActive = await settle();
      ctx.log(`memory: + ${active} active RFQs: RSS ${mib(afterActive.rssBytes)} MiB`);

      const connected = await farm.connect(server, makerWallets, makers - 1, 32);
      if (connected.connected !== makers) throw new Error(`memory: ${connected.connected} makers connected, wanted ${makers}`);
      const afterMakers = await settle();
      ctx.log(`memory: + ${makers} makers: RSS ${mib(afterMakers.rssBytes)} MiB`);

      return {
        storedRfqs: stored,
        activeRfqs: active,
        makers,
        baseline,
        afterStored,
        afterActive,
        afterMakers,
        bytesPerStoredRfq: Math.round((afterStored.rssBytes - baseline.rssBytes) / stored),
        bytesPerActiveRfq: Math.round((afterActive.rssBytes - afterStored.rssBytes) / active),
        bytesPerMakerConnection: Math.round((afterMakers.rssBytes - afterActive.rssBytes) / (makers - 1)),
        rssGiB: Math.round((afterMakers.rssBytes / GIB) * 1000) / 1000,
        createPerS,
      };
    } finally {
      await farm.close().catch(() => undefined);
      await target.close();
      await server.stop();
    }
  },
};

const mib = (bytes: number) => Math.round(bytes / 1024 ** 2);
