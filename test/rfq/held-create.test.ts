// A create held to share its RFQ's terminal commit (shard.ts commitCreate, PARLAYD_CREATE_COALESCE_MS): when
// the taker's answer waits for the result (wait_ms), the create and the terminal write commit together. These
// prove what that must not change: the answer still follows a durable create (found after a kill -9, replay
// key kept), a wait that ends before the RFQ does answers a durable `pending` on time, and the wager of a
// held create is spent for every other movement of the taker's money (its shard decided it already).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { restartServer, startServer } from '../helpers/server.js';
import { connectNewMaker } from '../helpers/makers.js';
import { assertMoneyInvariant, autoQuote, balanceOf, fundedTaker, unsignedBody } from '../helpers/rfq.js';
import { contestConfig, createContest, enter, up } from '../helpers/contests.js';
import { createMarket } from '../helpers/markets.js';

const WAGER = 2_000_000;

test('a held create commits with its fill: the answer is durable across a kill -9 and the replay key is kept', async () => {
  const server = await startServer({ env: { PARLAYD_CREATE_COALESCE_MS: '1000' } });
  const { user, market, api } = await fundedTaker(server, 10_000_000);
  const maker = await connectNewMaker(server);
  autoQuote(maker, { odds: 2 });
  const body = unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER });
  const answered = await api.post('/v1/rfq/unsigned?wait_ms=5000', body);
  assert.deepEqual([answered.status, answered.body.status], [201, 'completed']);
  await maker.close();
  await server.kill();

  const restarted = await restartServer(server);
  try {
    const restartedApi = client(restarted.baseUrl, user.token);
    const id = answered.body.request_id as string;
    assert.deepEqual((await restartedApi.get(`/v1/rfq/${id}`)).body, answered.body);
    const replay = await restartedApi.post('/v1/rfq/unsigned', body);
    assert.deepEqual([replay.status, replay.body.request_id, replay.body.status], [200, id, 'completed']);
    const balance = await assertMoneyInvariant(restarted, user, 10_000_000n);
    assert.deepEqual([balance.reserved, balance.atRisk], [0n, BigInt(WAGER)]);
    // Nothing was left marked active for the restart to fail (its terminal write removed or never needed a marker).
    assert.equal(
      restarted.logs.find((l) => l['msg'] === 'RFQs active at the last stop ended failed SERVICE_RESTARTED'),
      undefined,
    );
  } finally {
    await restarted.stop();
  }
});

test('a wait that ends before the RFQ answers a durable pending once, on time, and the RFQ stays cancellable', async () => {
  // The hold (400 ms) outlasts the wait (300 ms): the create commits alone when the answer falls due.
  const server = await startServer({ env: { PARLAYD_CREATE_COALESCE_MS: '400', PARLAYD_QUOTE_WINDOW_MS: '10000' } });
  try {
    const { user, market, api } = await fundedTaker(server, 10_000_000);
    const silent = await connectNewMaker(server); // hears the RFQ, never answers: it stays quoting
    const startMs = Date.now();
    const answered = await api.post(
      '/v1/rfq/unsigned?wait_ms=300',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER }),
    );
    const elapsedMs = Date.now() - startMs;
    assert.deepEqual([answered.status, answered.body.status], [201, 'pending']);
    // wait_ms counts from the request, not from the create's commit (that would be ~600 ms).
    assert.ok(elapsedMs >= 300 && elapsedMs < 550, `answered after ${elapsedMs} ms`);
    const id = answered.body.request_id as string;
    assert.equal((await silent.next('rfq')).request_id, id);
    assert.deepEqual([(await api.get(`/v1/rfq/${id}`)).body.status], ['pending']);
    assert.equal((await balanceOf(server, user)).reserved, BigInt(WAGER), 'the reservation is durable with the create');
    const cancelled = await api.post(`/v1/rfq/${id}/cancel`);
    assert.deepEqual([cancelled.status, cancelled.body.status], [200, 'cancelled']);
    const balance = await assertMoneyInvariant(server, user, 10_000_000n);
    assert.equal(balance.reserved, 0n);
    await silent.close();
  } finally {
    await server.stop();
  }
});

test('a held create has its wager decided: a contest entry made while it is held cannot spend it (422), and the RFQ fills', async () => {
  const server = await startServer({ env: { PARLAYD_CREATE_COALESCE_MS: '1000', PARLAYD_QUOTE_WINDOW_MS: '10000' } });
  try {
    const { user, market, api } = await fundedTaker(server, WAGER);
    const contestMarket = await createMarket(server, 'held-create');
    const contest = await createContest(server, contestConfig([contestMarket.market_id], { bet_amount_micros: WAGER }));
    const maker = await connectNewMaker(server);
    const closer = await connectNewMaker(server);
    const body = unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER });

    const answer = api.post('/v1/rfq/unsigned?wait_ms=8000', body);
    const rfq = await maker.next('rfq');
    maker.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'q', odds: 2, max_wager_micros: '9000000' });
    await maker.next('quote_ack');
    // The create's write is still held (the second maker's silence keeps the RFQ open), so nothing is
    // reserved on disk yet; the shard decided the wager all the same, and the entry's stake is the same money.
    assert.equal((await balanceOf(server, user)).reserved, 0n, 'the create is still held');
    const entry = await enter(server, user, contest.contest_id, [up(contestMarket.market_id)]);
    assert.deepEqual([entry.status, entry.body.code], [422, 'INSUFFICIENT_BALANCE']);
    closer.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'q', odds: 1.9, max_wager_micros: '9000000' });
    const filled = await answer;
    assert.deepEqual([filled.status, filled.body.status, filled.body.request_id], [201, 'completed', rfq.request_id]);
    const balance = await assertMoneyInvariant(server, user, BigInt(WAGER));
    assert.deepEqual([balance.available, balance.reserved, balance.atRisk], [0n, 0n, BigInt(WAGER)], 'only the RFQ holds money');
    await maker.close();
    await closer.close();
  } finally {
    await server.stop();
  }
});
