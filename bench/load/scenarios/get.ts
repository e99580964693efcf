// Scenario `get`: authenticated GET /v1/rfq/{id} of terminal (completed) RFQs, closed loop with the same
// client (raw-http.ts), connections and request shape as `ceiling`, so req/s divides by the ceilings of
// this run.
import { fundedUsers, openMarkets, registerMakers } from '../fixtures.js';
import { runClosedLoop, type ClosedLoopResult } from '../closed-loop.js';
import { DEFAULT_CONNECTIONS, httpTarget, send } from '../http-client.js';
import { RawHttpPool, encodeGet } from '../raw-http.js';
import { MakerFarm } from '../makers.js';
import { CREDIT_MICROS, isTerminalWith, postRfq, prepareUnsigned, requestIdOf } from '../rfq-traffic.js';
import { startServerFor, stepMs, type RunContext, type Scenario } from './context.js';
import type { BenchServer } from '../server.js';
import type { CeilingResult } from './ceiling.js';

export interface GetResult extends ClosedLoopResult {
  storedRfqs: number;
  bodyBytes: number;
  ofUwsCeiling: number | null;
  ofHttpCeiling: number | null;
}

/** A service holding `count` completed RFQs to read back, with each one's path and its taker's authorization. */
export interface ServiceWithRfqs {
  server: BenchServer;
  target: ReturnType<typeof httpTarget>;
  rfqs: Array<{ path: string; headers: Record<string, string> }>;
  close(): Promise<void>;
}

export async function serviceWithCompletedRfqs(ctx: RunContext, count: number): Promise<ServiceWithRfqs> {
  const server = await startServerFor(ctx);
  const target = httpTarget(server.baseUrl);
  const farm = new MakerFarm();
  const close = async () => {
    await farm.close().catch(() => undefined);
    await target.close();
    await server.stop();
  };
  try {
    const users = await fundedUsers(server, 8, CREDIT_MICROS);
    const markets = await openMarkets(server, 8);
    await farm.connect(server, await registerMakers(server, 2), 2);
    await farm.setPolicy('quote');
    // Created 64 at a time.
    const prepared = prepareUnsigned(users, markets, count, 2000);
    const rfqs: ServiceWithRfqs['rfqs'] = [];
    for (let i = 0; i < count; i += 64) {
      const answers = await Promise.all(prepared.slice(i, i + 64).map((rfq) => postRfq(target.pool, rfq)));
      answers.forEach((answer, k) => {
        if (!isTerminalWith(answer, 'completed')) throw new Error(`setup RFQ did not complete: ${answer.status} ${answer.text}`);
        rfqs.push({ path: `/v1/rfq/${requestIdOf(answer)}`, headers: { authorization: prepared[i + k]!.headers['authorization']! } });
      });
    }
    return { server, target, rfqs, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export const get: Scenario<GetResult> = {
  name: 'get',
  describe: 'authenticated GET /v1/rfq/{id} of completed RFQs, closed loop (req/s against the ceilings)',
  async run(ctx: RunContext) {
    const count = ctx.isQuick ? 256 : 2048;
    const { server, target, rfqs, close } = await serviceWithCompletedRfqs(ctx, count);
    try {
      const sample = await send(target.pool, 'GET', rfqs[0]!.path, rfqs[0]!.headers);
      const requests = rfqs.map(({ path, headers }) => encodeGet(server.port, path, headers));
      const raw = await RawHttpPool.open(server.port, DEFAULT_CONNECTIONS);
      const result = await runClosedLoop({
        concurrency: DEFAULT_CONNECTIONS,
        durationMs: stepMs(ctx, 5000),
        warmupMs: stepMs(ctx, 1000, 300),
        request: async (i) => (await raw.request(requests[i % requests.length]!)).status === 200,
        serverPid: server.pid,
      }).finally(() => raw.close());
      const ceilingResult = ctx.results.get('ceiling') as CeilingResult | undefined;
      const ratio = (denominator: number | undefined) =>
        denominator === undefined ? null : Math.round((result.reqPerS / denominator) * 1000) / 1000;
      const out: GetResult = {
        ...result,
        storedRfqs: count,
        bodyBytes: Buffer.byteLength(sample.text),
        ofUwsCeiling: ratio(ceilingResult?.uws.reqPerS),
        ofHttpCeiling: ratio(ceilingResult?.http.reqPerS),
      };
      ctx.log(
        `get: ${out.reqPerS} req/s, ${out.ofUwsCeiling ?? '?'} of uWS, ${out.ofHttpCeiling ?? '?'} of node:http (p99 ${out.latency.p99Ms} ms)`,
      );
      return out;
    } finally {
      await close();
    }
  },
};
