// Makers hear of an RFQ at admission, before its shard has it (shard-pool.ts create), only when committed
// state and the creates still on their way say the shard will accept it. These check both halves: what the
// main thread must count so it never announces an RFQ the shard would surely refuse, and what an RFQ the
// shard refuses after all leaves behind (nothing: it never existed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../helpers/server.js';
import { connectNewMaker } from '../helpers/makers.js';
import { assertMoneyInvariant, fundedTaker, rfqIdsHeard, unsignedBody } from '../helpers/rfq.js';

const WAGER = 2_000_000;

test('creates on their way count: of two RFQs the balance covers once, makers hear of one, and one is refused', async () => {
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000' } });
  try {
    const { user, market, api } = await fundedTaker(server, WAGER);
    const silent = await connectNewMaker(server); // keeps the funded RFQ open and its wager reserved
    const leg = { market_id: market, direction: 'up' as const };
    const answers = await Promise.all([1, 2].map(() => api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }))));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 422]);
    const accepted = answers.find((a) => a.status === 201)!;
    assert.equal(answers.find((a) => a.status === 422)!.body.code, 'INSUFFICIENT_BALANCE');
    assert.deepEqual(await rfqIdsHeard(silent), [accepted.body.request_id]);
    await api.post(`/v1/rfq/${accepted.body.request_id}/cancel`);
    await assertMoneyInvariant(server, user, BigInt(WAGER));
    await silent.close();
  } finally {
    await server.stop();
  }
});

test('two submissions with one key on their way together: makers hear of one RFQ, and both answers name it', async () => {
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000' } });
  try {
    const { user, market, api } = await fundedTaker(server, 10 * WAGER);
    const silent = await connectNewMaker(server);
    const body = unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER });
    const answers = await Promise.all([1, 2, 3].map(() => api.post('/v1/rfq/unsigned', body)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 201]);
    const ids = new Set(answers.map((a) => a.body.request_id as string));
    assert.equal(ids.size, 1);
    assert.deepEqual(await rfqIdsHeard(silent), [...ids]);
    await silent.close();
  } finally {
    await server.stop();
  }
});

test('an announced RFQ its shard refuses never existed: 503, its quotes get RFQ_CLOSED, its key stays unused', async () => {
  // One active RFQ per shard (tests run one shard): the main thread does not count a shard's active RFQs,
  // so the second RFQ is announced, then refused by its shard.
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000', PARLAYD_MAX_ACTIVE_RFQS_PER_SHARD: '1' } });
  try {
    const { user, market, api } = await fundedTaker(server, 10 * WAGER);
    const maker = await connectNewMaker(server);
    const leg = { market_id: market, direction: 'up' as const };
    const open = await api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }));
    assert.equal(open.status, 201);
    assert.equal((await maker.next('rfq')).request_id, open.body.request_id);

    const body = unsignedBody([leg], { wager_micros: WAGER });
    const refused = await api.post('/v1/rfq/unsigned?wait_ms=2000', body);
    assert.deepEqual([refused.status, refused.body.code], [503, 'OVERLOADED']);
    assert.equal(refused.headers.get('retry-after'), '1', 'a 503 says when to retry (contract section 2)');
    const announced = await maker.next('rfq');
    assert.notEqual(announced.request_id, open.body.request_id);
    maker.send({ type: 'quote', request_id: announced.request_id, quote_id: 'q', odds: 2, max_wager_micros: String(WAGER) });
    const reject = await maker.next('quote_reject');
    assert.deepEqual([reject.request_id, reject.reason], [announced.request_id, 'RFQ_CLOSED']);
    assert.equal((await api.get(`/v1/rfq/${announced.request_id}`)).status, 404);
    // Nothing was reserved for it, and its idempotency key was not consumed: once the first RFQ ends, the
    // same request is a new RFQ (201), not a replay.
    const balance = await assertMoneyInvariant(server, user, BigInt(10 * WAGER));
    assert.equal(balance.reserved, BigInt(WAGER));
    assert.equal((await api.post(`/v1/rfq/${open.body.request_id}/cancel`)).status, 200);
    const again = await api.post('/v1/rfq/unsigned', body);
    assert.equal(again.status, 201);
    assert.notEqual(again.body.request_id, announced.request_id);
    await api.post(`/v1/rfq/${again.body.request_id}/cancel`);
    await maker.close();
  } finally {
    await server.stop();
  }
});

test('an RFQ announced to no maker at all ends timeout at once, its wager released', async () => {
  // A quote window far longer than the test: only "every maker in the audience answered" (none) can end it.
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '60000' } });
  try {
    const { user, market, api } = await fundedTaker(server, 10 * WAGER);
    const answered = await api.post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER }));
    assert.deepEqual([answered.status, answered.body.status, answered.body.quotes_received], [201, 'timeout', 0]);
    const balance = await assertMoneyInvariant(server, user, BigInt(10 * WAGER));
    assert.equal(balance.reserved, 0n);
  } finally {
    await server.stop();
  }
});
