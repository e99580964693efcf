// Scenario `overload` (issue 21): unsigned RFQs (wait_ms=1000; one maker that hears every RFQ and never
// quotes, so each stays active for its whole quote window, as under a real slow market) offered open loop at 3x the saturation rate, the `unsigned` ladder's sustained RFQ/s (this run's,
// else bench/results/unsigned.json's). What it shows: past saturation the service refuses (503 OVERLOADED
// with Retry-After from the shard's active-RFQ and waiter bounds, 429 from the rate limit) instead of
// queueing: the answered requests' latency stays bounded, and the server's resident memory, sampled through
// the step, levels off. Every refusal without Retry-After is counted as a failure of the scenario.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectNewMaker } from '../../../test/helpers/makers.js';
import { fundedUsers, openMarkets } from '../fixtures.js';
import { runOpenLoop, type OpenLoopResult } from '../open-loop.js';
import { RawHttpPool } from '../raw-http.js';
import { resultsDir } from '../report.js';
import { CREDIT_MICROS, encodeRfqs, prepareUnsigned } from '../rfq-traffic.js';
import { readMemory } from '../server.js';
import { startServerFor, stepMs, type Scenario } from './context.js';

const USERS = 16;
const MARKETS = 4;
const WAIT_MS = 1000;
const OVERLOAD_FACTOR = 3;
/** When no ladder result exists: about what this 2-core machine sustained (bench/results/unsigned.json). */
const FALLBACK_SATURATION_PER_S = 1000;
/** The client's own bound on requests in flight: it must not be what limits the offered rate. */
const MAX_IN_FLIGHT = 20_000;
const MEMORY_SAMPLE_MS = 250;

export interface OverloadResult {
  saturationPerS: number;
  offeredPerS: number;
  step: OpenLoopResult;
  byStatus: Record<number, number>;
  /** 429 and 503 answers without Retry-After (must be 0). */
  refusalsWithoutRetryAfter: number;
  /** Server RSS (MiB) sampled every MEMORY_SAMPLE_MS through the step. */
  rssMiB: number[];
  /** Peak RSS over the step less the RSS before it, MiB. */
  rssGrowthMiB: number;
}

function saturationPerS(results: Map<string, unknown>): number {
  const now = results.get('unsigned') as { sustainedPerS?: number } | undefined;
  if (now?.sustainedPerS !== undefined && now.sustainedPerS > 0) return now.sustainedPerS;
  const file = join(resultsDir, 'unsigned.json');
  if (!existsSync(file)) return FALLBACK_SATURATION_PER_S;
  const stored = JSON.parse(readFileSync(file, 'utf8')) as { result?: { sustainedPerS?: number } };
  const sustained = stored.result?.sustainedPerS ?? 0;
  return sustained > 0 ? sustained : FALLBACK_SATURATION_PER_S;
}

export const overload: Scenario<OverloadResult> = {
  name: 'overload',
  describe: `unsigned RFQs at ${OVERLOAD_FACTOR}x the saturation rate: refusals (503 + Retry-After, 429), bounded latency and memory`,
  async run(ctx) {
    // --quick checks the tool in a second at a low rate; its figures mean nothing.
    const saturation = ctx.isQuick ? 100 : saturationPerS(ctx.results);
    const offeredPerS = saturation * OVERLOAD_FACTOR;
    const durationMs = stepMs(ctx, 10_000);
    // --quick shrinks the shard's active-RFQ bound so that its low rate still reaches the refusal path.
    const server = await startServerFor(ctx, ctx.isQuick ? { PARLAYD_MAX_ACTIVE_RFQS_PER_SHARD: '50' } : {});
    const pool = await RawHttpPool.open(server.port, 256);
    try {
      const users = await fundedUsers(server, USERS, CREDIT_MICROS);
      const markets = await openMarkets(server, MARKETS);
      // Without any maker an RFQ ends at once (no audience); a silent one keeps it open its whole window.
      const silentMaker = await connectNewMaker(server);
      const count = Math.ceil((offeredPerS * durationMs) / 1000);
      const requests = encodeRfqs(server.port, prepareUnsigned(users, markets, count, WAIT_MS));
      const byStatus: Record<number, number> = {};
      let refusalsWithoutRetryAfter = 0;
      const rssBeforeMiB = readMemory(server.pid).rssBytes / 2 ** 20;
      const rssMiB: number[] = [];
      const sampler = setInterval(() => rssMiB.push(Math.round(readMemory(server.pid).rssBytes / 2 ** 20)), MEMORY_SAMPLE_MS);
      ctx.log(`overload: ${offeredPerS} RFQ/s offered (${OVERLOAD_FACTOR} x ${saturation}) for ${durationMs} ms`);
      const step = await runOpenLoop({
        ratePerS: offeredPerS,
        durationMs,
        maxInFlight: MAX_IN_FLIGHT,
        request: async (i) => {
          const answer = await pool.request(requests[i]!);
          byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
          const isRefusal = answer.status === 429 || answer.status === 503;
          if (isRefusal && !/\r\nretry-after:/i.test(answer.head)) refusalsWithoutRetryAfter++;
          // An answer is "ok" when it is an acceptance or a refusal the contract allows: anything else errs.
          return answer.status === 201 || isRefusal;
        },
      });
      clearInterval(sampler);
      await silentMaker.close();
      const rssGrowthMiB = Math.round(Math.max(...rssMiB, rssBeforeMiB) - rssBeforeMiB);
      ctx.log(`overload: ${JSON.stringify(byStatus)}; p99 ${step.latency.p99Ms} ms; RSS +${rssGrowthMiB} MiB; ${refusalsWithoutRetryAfter} refusals without Retry-After`);
      return { saturationPerS: saturation, offeredPerS, step, byStatus, refusalsWithoutRetryAfter, rssMiB, rssGrowthMiB };
    } finally {
      pool.close();
      await server.stop();
    }
  },
};
