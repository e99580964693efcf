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
import type { CeilingResult } from './ceiling.js';

export interface GetResult extends ClosedLoopResult {
  storedRfqs: number;
  bodyBytes: number;
  ofUwsCeiling: number | null;
  ofHttpCeiling: number | null;
}

export const get: Scenario<GetResult> = {
  name: 'get',
  describe: 'authenticated GET /v1/rfq/{id} of completed RFQs, closed loop (req/s against the ceilings)',
  async run(ctx: RunContext) {
    const server = await startServerFor(ctx);
    const target = httpTarget(server.baseUrl);
    const farm = new MakerFarm();
    try {
      const users = await fundedUsers(server, 8, CREDIT_MICROS);
      const markets = await openMarkets(server, 8);
      await farm.connect(server, await registerMakers(server, 2), 2);
      await farm.setPolicy('quote');
      // Completed RFQs to read back, created 64 at a time.
      const count = ctx.isQuick ? 256 : 2048;
      const prepared = prepareUnsigned(users, markets, count, 2000);
      const ids: Array<{ id: string; headers: Record<string, string> }> = [];
      for (let i = 0; i < count; i += 64) {
        const answers = await Promise.all(prepared.slice(i, i + 64).map((rfq) => postRfq(target.pool, rfq)));
        answers.forEach((answer, k) => {
          if (!isTerminalWith(answer, 'completed')) throw new Error(`setup RFQ did not complete: ${answer.status} ${answer.text}`);
          ids.push({ id: requestIdOf(answer), headers: { authorization: prepared[i + k]!.headers['authorization']! } });
        });
      }
      const sample = await send(target.pool, 'GET', `/v1/rfq/${ids[0]!.id}`, ids[0]!.headers);
      const requests = ids.map(({ id, headers }) => encodeGet(server.port, `/v1/rfq/${id}`, headers));
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
      await farm.close().catch(() => undefined);
      await target.close();
      await server.stop();
    }
  },
};
