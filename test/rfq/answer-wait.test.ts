// The terminal results the main thread holds for a create's answer (shard-pool.ts unclaimedTerminals): an
// RFQ's end can reach the main thread before the request that created it waits for it, so a create that
// asked to wait (wait_ms) finds its result there. A create that did not ask is never claimed that way: its
// taker polls, served from LMDB. Seen through the parlayd_rfq_unclaimed_results gauge on /metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { connectNewMaker } from '../helpers/makers.js';
import { autoQuote, fundedTaker, unsignedBody } from '../helpers/rfq.js';
import { waitFor } from '../helpers/wait.js';

async function unclaimedResults(server: TestServer): Promise<number> {
  const text = (await client(server.baseUrl, server.adminToken).get('/metrics')).body as string;
  const line = /^parlayd_rfq_unclaimed_results (\d+)$/m.exec(text);
  assert.ok(line !== null, 'the gauge is exported');
  return Number(line[1]);
}

test('only a create that waits for its result has it held, and its answer takes it', async () => {
  const server = await startServer();
  try {
    const { market, api } = await fundedTaker(server, 100_000_000);
    const maker = await connectNewMaker(server);
    autoQuote(maker, { odds: 2 });
    const legs = [{ market_id: market, direction: 'up' as const }];

    // Polled: answered `pending` at once, then read until completed. Each ends with nobody waiting for it.
    const polledIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await api.post('/v1/rfq/unsigned', unsignedBody(legs, { wager_micros: 1_000_000 }));
      assert.deepEqual([created.status, created.body.status], [201, 'pending']);
      polledIds.push(created.body.request_id as string);
    }
    for (const id of polledIds) {
      const status = await waitFor(
        async () => {
          const read = (await api.get(`/v1/rfq/${id}`)).body.status as string;
          return read !== 'pending' && read;
        },
        { timeoutMs: 10_000, intervalMs: 5, what: `rfq ${id} no longer pending` },
      );
      assert.equal(status, 'completed', id);
    }
    assert.equal(await unclaimedResults(server), 0, 'results nobody will claim are not held');

    // Waited for: the answer is the terminal result, and it took what was held for it.
    for (let i = 0; i < 3; i++) {
      const answered = await api.post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody(legs, { wager_micros: 1_000_000 }));
      assert.deepEqual([answered.status, answered.body.status], [201, 'completed']);
    }
    assert.equal(await unclaimedResults(server), 0, 'every held result was claimed by its answer');
    await maker.close();
  } finally {
    await server.stop();
  }
});
