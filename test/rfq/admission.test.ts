// Admission and idempotency of both RFQ routes (interface.md POST /v1/rfq, POST /v1/rfq/unsigned;
// contract sections 2 and 6): every refusal has its code and leaves nothing behind.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Wallet } from 'ethers';
import { assertApiError } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { assertMoneyInvariant, autoQuote, rfqIdsHeard, signedOrder, unsignedBody, type OrderFields } from '../helpers/rfq.js';

const FUNDS = 50_000_000n;
let server: TestServer;
let user: TestUser;
let other: TestUser;
let market: number;
let maker: ConnectedMaker;

before(async () => {
  // A last look longer than an order's life, so the order's deadline is what ends it.
  server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '300', PARLAYD_LAST_LOOK_MS: '5000' } });
  user = await loginWallet(server);
  other = await loginWallet(server);
  await credit(server, user.address, Number(FUNDS));
  await credit(server, other.address, Number(FUNDS));
  market = (await createMarket(server)).market_id;
  // A maker that always declines: every RFQ ends at once (timeout) and leaves no position open.
  maker = await connectNewMaker(server);
  autoQuote(maker, { odds: 0, isDecline: true });
});

after(async () => {
  await maker.close();
  // No refusal and no finished RFQ may leave money reserved.
  await assertMoneyInvariant(server, user, FUNDS);
  await assertMoneyInvariant(server, other, FUNDS);
  await server.stop();
});

const api = (who: TestUser = user) => client(server.baseUrl, who.token);
let nonce = 1;
const orderFields = (overrides: Partial<OrderFields> = {}): OrderFields => ({
  wager_micros: 2_000_000,
  min_odds: 1.15,
  legs: [{ market_id: market, direction: 'up' }],
  nonce: nonce++,
  expires_at_ms: Date.now() + 60_000,
  shield_on: false,
  ...overrides,
});

test('a signed order from the session wallet is created (201) and replayed (200, same request_id)', async () => {
  const order = await signedOrder(user.wallet, orderFields());
  const created = await api().post('/v1/rfq?wait_ms=5000', { order });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.status, 'timeout');
  const replay = await api().post('/v1/rfq', { order });
  assert.equal(replay.status, 200);
  assert.deepEqual(replay.body, created.body);
});

test('a signed order with the address lowercase and without 0x verifies the same', async () => {
  const order = await signedOrder(user.wallet, orderFields(), user.address.slice(2));
  const created = await api().post('/v1/rfq', { order });
  assert.equal(created.status, 201, JSON.stringify(created.body));
});

test('same (wallet, nonce) with other content is 409 IDEMPOTENCY_CONFLICT', async () => {
  const fields = orderFields();
  const first = await api().post('/v1/rfq', { order: await signedOrder(user.wallet, fields) });
  assert.equal(first.status, 201);
  assertApiError(
    await api().post('/v1/rfq', { order: await signedOrder(user.wallet, { ...fields, wager_micros: 3_000_000 }) }),
    409,
    'IDEMPOTENCY_CONFLICT',
  );
});

test('an idempotency key in upper case is the same key in lower case: one RFQ, replayed with 200', async () => {
  const key = randomUUID();
  const body = unsignedBody([{ market_id: market, direction: 'up' }], { idempotency_key: key.toUpperCase() });
  const created = await api().post('/v1/rfq/unsigned?wait_ms=2000', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const replay = await api().post('/v1/rfq/unsigned', { ...body, idempotency_key: key });
  assert.deepEqual([replay.status, replay.body.request_id], [200, created.body.request_id]);
});

test('a replay after expires_at_ms is still 200 with the same request_id', async () => {
  const order = await signedOrder(user.wallet, orderFields({ expires_at_ms: Date.now() + 400 }));
  const created = await api().post('/v1/rfq?wait_ms=5000', { order });
  assert.equal(created.status, 201);
  await new Promise((r) => setTimeout(r, 450));
  const replay = await api().post('/v1/rfq', { order });
  assert.deepEqual([replay.status, replay.body.request_id], [200, created.body.request_id]);
});

test('an expired order is 400 ORDER_EXPIRED', async () => {
  const order = await signedOrder(user.wallet, orderFields({ expires_at_ms: Date.now() - 1 }));
  assertApiError(await api().post('/v1/rfq', { order }), 400, 'ORDER_EXPIRED');
});

test('expiry is checked before the legs and the wager (contract section 6): an expired order is ORDER_EXPIRED whatever else is wrong', async () => {
  const resolved = (await createMarket(server)).market_id;
  await resolveMarket(server, resolved, 'YES');
  const onResolved = await signedOrder(
    user.wallet,
    orderFields({ expires_at_ms: Date.now() - 1, legs: [{ market_id: resolved, direction: 'up' }] }),
  );
  assertApiError(await api().post('/v1/rfq', { order: onResolved }), 400, 'ORDER_EXPIRED');
  const tooSmall = await signedOrder(user.wallet, orderFields({ expires_at_ms: Date.now() - 1, wager_micros: 1 }));
  assertApiError(await api().post('/v1/rfq', { order: tooSmall }), 400, 'ORDER_EXPIRED');
});

test('an order signed by another key is 403 SIGNER_MISMATCH', async () => {
  const order = await signedOrder(Wallet.createRandom(), orderFields(), user.wallet.address);
  assertApiError(await api().post('/v1/rfq', { order }), 403, 'SIGNER_MISMATCH');
});

test("another wallet's valid order on my session is 403 SIGNER_MISMATCH", async () => {
  const order = await signedOrder(other.wallet, orderFields());
  assertApiError(await api().post('/v1/rfq', { order }), 403, 'SIGNER_MISMATCH');
});

test('a signature that is not base64 of 65 bytes, or high-s, is 400 INVALID_SIGNATURE', async () => {
  const order = await signedOrder(user.wallet, orderFields());
  assertApiError(await api().post('/v1/rfq', { order: { ...order, signature: 'AAAA' } }), 400, 'INVALID_SIGNATURE');
  // Flip s to n - s (and v): the same point, a second valid-looking signature that EIP-2 forbids.
  const sig = Buffer.from(order.signature, 'base64');
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const s = BigInt('0x' + sig.subarray(32, 64).toString('hex'));
  sig.set(Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex'), 32);
  sig[64] = sig[64] === 27 ? 28 : 27;
  assertApiError(await api().post('/v1/rfq', { order: { ...order, signature: sig.toString('base64') } }), 400, 'INVALID_SIGNATURE');
});

test('the order is checked before its signature: a bad checksum or unsignable min_odds is VALIDATION_FAILED at /order/…, whatever the signature', async () => {
  const order = await signedOrder(user.wallet, orderFields());
  const badChecksum = { ...order, user: order.user.slice(0, 2) + swapCase(order.user.slice(2)), signature: 'AAAA' };
  const checksum = assertApiError(await api().post('/v1/rfq', { order: badChecksum }), 400, 'VALIDATION_FAILED');
  assert.equal(checksum.details?.[0]?.path, '/order/user');
  const odds = assertApiError(
    await api().post('/v1/rfq', { order: { ...order, min_odds: 0.00001, signature: 'AAAA' } }),
    400,
    'VALIDATION_FAILED',
  );
  assert.equal(odds.details?.[0]?.path, '/order/min_odds');
});

test('schema violations are 400 VALIDATION_FAILED with details', async () => {
  const legs = (count: number) => Array.from({ length: count }, (_, i) => ({ market_id: market + i, direction: 'up' }));
  for (const body of [
    unsignedBody([]),
    unsignedBody(legs(9) as never),
    unsignedBody([{ market_id: market, direction: 'sideways' as never }]),
    unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 1.5 }),
    unsignedBody([{ market_id: market, direction: 'up' }], { idempotency_key: 'not-a-uuid' }),
    unsignedBody([{ market_id: market, direction: 'up' }], { surprise: true }),
  ]) {
    const result = await api().post('/v1/rfq/unsigned', body);
    assert.equal(result.status, 400, JSON.stringify(body));
    assert.equal(result.body.code, 'VALIDATION_FAILED');
    assert.ok(Array.isArray(result.body.details) && result.body.details.length > 0);
  }
  // A wager beyond 2^53 - 1 cannot be represented exactly: refused, never rounded.
  const raw = JSON.stringify(unsignedBody([{ market_id: market, direction: 'up' }])).replace(
    '"wager_micros":2000000',
    '"wager_micros":9007199254740993',
  );
  assertApiError(
    await api().post('/v1/rfq/unsigned', undefined, { rawBody: raw, headers: { 'content-type': 'application/json' } }),
    400,
    'VALIDATION_FAILED',
  );
});

test('legs must exist, be open and be distinct; the wager must be in range and funded', async () => {
  const closing = (await createMarket(server, 'closing', Date.now() + 150)).market_id;
  await new Promise((r) => setTimeout(r, 200));
  const leg = { market_id: market, direction: 'up' as const };
  assertApiError(await api().post('/v1/rfq/unsigned', unsignedBody([{ market_id: 999_999, direction: 'up' }])), 404, 'MARKET_NOT_FOUND');
  assertApiError(await api().post('/v1/rfq/unsigned', unsignedBody([{ market_id: closing, direction: 'up' }])), 422, 'MARKET_NOT_OPEN');
  assertApiError(await api().post('/v1/rfq/unsigned', unsignedBody([leg, { ...leg, direction: 'down' }])), 422, 'DUPLICATE_MARKET');
  assertApiError(await api().post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: 999_999 })), 422, 'WAGER_OUT_OF_RANGE');
  assertApiError(await api().post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: 0 })), 422, 'WAGER_OUT_OF_RANGE');
  assertApiError(
    await api().post('/v1/rfq', { order: await signedOrder(user.wallet, orderFields({ wager_micros: 0 })) }),
    422,
    'WAGER_OUT_OF_RANGE',
  );
  assertApiError(await api().post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: 10_000_000_001 })), 422, 'WAGER_OUT_OF_RANGE');
  const rfqsSeen = () => maker.socket.received.filter((m) => m.type === 'rfq').map((m) => (m as { request_id: string }).request_id);
  const seenBefore = rfqsSeen().length;
  assertApiError(
    await api().post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: Number(FUNDS) + 1 })),
    422,
    'INSUFFICIENT_BALANCE',
  );
  // Makers hear of an RFQ at admission or while its create commits, so an unaffordable one must be refused
  // before any maker hears of it: the next rfq frame the maker gets is the next accepted RFQ's.
  const accepted = await api().post('/v1/rfq/unsigned?wait_ms=2000', unsignedBody([leg]));
  assert.equal(accepted.status, 201);
  assert.deepEqual(rfqsSeen().slice(seenBefore), [accepted.body.request_id]);
});

test('unsigned replay: same key and content is 200 with the same id; other content is 409', async () => {
  const body = unsignedBody([{ market_id: market, direction: 'up' }]);
  const created = await api().post('/v1/rfq/unsigned?wait_ms=5000', body);
  assert.equal(created.status, 201);
  const replay = await api().post('/v1/rfq/unsigned', body);
  assert.deepEqual([replay.status, replay.body], [200, created.body]);
  assertApiError(await api().post('/v1/rfq/unsigned', { ...body, min_odds: 1.6 }), 409, 'IDEMPOTENCY_CONFLICT');
  // The key belongs to the user: another user with the same key creates its own RFQ.
  const theirs = await api(other).post('/v1/rfq/unsigned', body);
  assert.equal(theirs.status, 201);
  assert.notEqual(theirs.body.request_id, created.body.request_id);
});

test('two identical submissions racing on separate connections create one RFQ, and makers hear of one', async () => {
  const heardSince = async (from: number) => (await rfqIdsHeard(maker)).slice(from);
  const heardBefore = (await heardSince(0)).length;
  const body = unsignedBody([{ market_id: market, direction: 'up' }]);
  const results = await Promise.all(Array.from({ length: 6 }, () => api().post('/v1/rfq/unsigned', body)));
  const ids = new Set(results.map((r) => r.body.request_id));
  assert.equal(ids.size, 1);
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 201]);
  assert.deepEqual(await heardSince(heardBefore), [...ids]);
  const order = await signedOrder(user.wallet, orderFields());
  const signed = await Promise.all(Array.from({ length: 4 }, () => api().post('/v1/rfq', { order })));
  const signedIds = new Set(signed.map((r) => r.body.request_id));
  assert.equal(signedIds.size, 1);
  assert.deepEqual(signed.map((r) => r.status).sort(), [200, 200, 200, 201]);
  assert.deepEqual(await heardSince(heardBefore + 1), [...signedIds]);
});

test("a user reading or cancelling another user's RFQ gets 404 RFQ_NOT_FOUND, as for an unknown id", async () => {
  const created = await api().post('/v1/rfq/unsigned', unsignedBody([{ market_id: market, direction: 'up' }]));
  // The owner reads it twice: the second answer comes from the terminal-result cache and must be the same,
  // and the cached entry must still refuse another user.
  const first = await api().get(`/v1/rfq/${created.body.request_id}?wait_ms=2000`);
  assert.equal(first.body.status === 'pending', false, 'the RFQ ended (no maker is connected)');
  const second = await api().get(`/v1/rfq/${created.body.request_id}`);
  assert.deepEqual({ status: second.status, body: second.body }, { status: 200, body: first.body });
  assertApiError(await api(other).get(`/v1/rfq/${created.body.request_id}`), 404, 'RFQ_NOT_FOUND');
  assertApiError(await api(other).post(`/v1/rfq/${created.body.request_id}/cancel`), 404, 'RFQ_NOT_FOUND');
  assertApiError(await api().get(`/v1/rfq/${randomUUID()}`), 404, 'RFQ_NOT_FOUND');
  assertApiError(await api().get('/v1/rfq/not-a-uuid'), 400, 'VALIDATION_FAILED');
});

test('RFQ routes need a user session: none is 401, a maker token is 403', async () => {
  const body = unsignedBody([{ market_id: market, direction: 'up' }]);
  assertApiError(await client(server.baseUrl).post('/v1/rfq/unsigned', body), 401, 'UNAUTHENTICATED');
  assertApiError(await client(server.baseUrl, maker.sessionToken).post('/v1/rfq/unsigned', body), 403, 'FORBIDDEN');
  assertApiError(await client(server.baseUrl, server.adminToken).get(`/v1/rfq/${randomUUID()}`), 403, 'FORBIDDEN');
});

test('an order that expires during its last look fails ORDER_EXPIRED and releases the wager', async () => {
  const lastLooker = await connectNewMaker(server);
  try {
    const order = await signedOrder(user.wallet, orderFields({ expires_at_ms: Date.now() + 1_000 }));
    const created = api().post('/v1/rfq?wait_ms=5000', { order });
    const rfq = await lastLooker.next('rfq');
    assert.ok(rfq.quote_deadline_ms <= order.expires_at_ms && rfq.expires_at_ms === order.expires_at_ms);
    lastLooker.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'slow', odds: 2, max_wager_micros: '9000000', last_look: true });
    const lastLook = await lastLooker.next('last_look');
    assert.equal(lastLook.deadline_ms, order.expires_at_ms, 'a last look never runs past the order deadline');
    const result = await created; // the maker stays silent
    assert.deepEqual([result.status, result.body.status, result.body.error], [201, 'failed', 'ORDER_EXPIRED']);
    assert.deepEqual(await lastLooker.next('rfq_result'), { type: 'rfq_result', request_id: rfq.request_id, outcome: 'expired' });
  } finally {
    await lastLooker.close();
  }
});

/** An address's hex with each letter's case flipped: a different EIP-55 checksum (all hex digits stay valid). */
function swapCase(hex: string): string {
  return [...hex].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}
