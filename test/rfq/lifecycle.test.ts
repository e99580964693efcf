// RFQ lifecycle against the real server and real makers over `ws` (contract section 6): every status and
// failure reason reached for real, FOK vs IOC, last look, cancel, quote cancel, disconnects, shield.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { assertMoneyInvariant, autoQuote, balanceOf, unsignedBody } from '../helpers/rfq.js';

const FUNDS = 100_000_000n;
let server: TestServer;
let user: TestUser;
let marketA: number;
let marketB: number;
let makers: ConnectedMaker[] = [];
/** What the user holds in total: credits plus settled wins minus settled losses (contract section 4). */
let netMicros = FUNDS;

before(async () => {
  server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '400', PARLAYD_LAST_LOOK_MS: '300' } });
  user = await loginWallet(server);
  await credit(server, user.address, Number(FUNDS));
  marketA = (await createMarket(server)).market_id;
  marketB = (await createMarket(server)).market_id;
});

after(async () => {
  await server.stop();
});

/** Every test ends with its makers gone and the user's money whole and nothing left reserved. */
async function endTest(): Promise<void> {
  await Promise.all(makers.map((m) => m.close()));
  makers = [];
  const balance = await assertMoneyInvariant(server, user, netMicros);
  assert.equal(balance.reserved, 0n, 'no reservation outlives its RFQ');
}

async function makersNamed(count: number): Promise<ConnectedMaker[]> {
  makers = await Promise.all(Array.from({ length: count }, () => connectNewMaker(server)));
  return makers;
}

const api = () => client(server.baseUrl, user.token);

test('the best odds fill, every maker hears its own result, and the wager moves to at-risk', async () => {
  const [low, high] = await makersNamed(2);
  const body = unsignedBody(
    [
      { market_id: marketA, direction: 'up' },
      { market_id: marketB, direction: 'down' },
    ],
    { min_odds: 1.5 },
  );
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', body);
  const [rfqLow, rfqHigh] = await Promise.all([low!.next('rfq'), high!.next('rfq')]);
  assert.deepEqual(rfqLow.legs, body.legs);
  assert.equal(rfqLow.wager_micros, '2000000');
  assert.equal(rfqLow.order_type, 2);
  assert.deepEqual(rfqLow.taker, { address: user.address, tier: 0 });
  // Taken before the send: the service may read the quote before this process runs again.
  const sentAtMs = Date.now();
  low!.send({ type: 'quote', request_id: rfqLow.request_id, quote_id: 'low', odds: 1.9, max_wager_micros: '5000000' });
  high!.send({ type: 'quote', request_id: rfqHigh.request_id, quote_id: 'high', odds: 2.25, max_wager_micros: '5000000' });
  const ack = await low!.next('quote_ack');
  assert.deepEqual(ack, { type: 'quote_ack', request_id: rfqLow.request_id, quote_id: 'low', received_at_ms: ack.received_at_ms });
  // When the service read the quote: after it was sent, before the ack came back (one clock on one machine).
  assert.ok(ack.received_at_ms >= sentAtMs - 1 && ack.received_at_ms <= Date.now(), `received_at_ms ${ack.received_at_ms}`);
  const result = await created;
  assert.equal(result.status, 201);
  assert.deepEqual(result.body, {
    request_id: rfqLow.request_id,
    status: 'completed',
    odds: 2.25,
    payout_micros: '4500000',
    filled_wager_micros: '2000000',
    error: null,
    quotes_received: 2,
  });
  assert.deepEqual(await high!.next('rfq_result'), {
    type: 'rfq_result',
    request_id: rfqHigh.request_id,
    outcome: 'won',
    quote_id: 'high',
    odds: 2.25,
    filled_wager_micros: '2000000',
  });
  // A losing maker learns only that it lost.
  assert.deepEqual(await low!.next('rfq_result'), { type: 'rfq_result', request_id: rfqLow.request_id, outcome: 'lost' });
  const balance = await assertMoneyInvariant(server, user, netMicros);
  assert.equal(balance.atRisk, 2_000_000n);
  // The stored terminal result is what GET serves.
  assert.deepEqual((await api().get(`/v1/rfq/${rfqLow.request_id}`)).body, result.body);
  // Settle it as a loss (leg B was "down"; NO would win it, YES loses) so the test leaves no open position.
  await resolveMarket(server, marketB, 'YES');
  marketB = (await createMarket(server)).market_id;
  netMicros -= 2_000_000n;
  await endTest();
});

test('equal odds go to the earlier quote', async () => {
  const [first, second] = await makersNamed(2);
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const rfq = await first!.next('rfq');
  await second!.next('rfq');
  first!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'first', odds: 2, max_wager_micros: '5000000' });
  await first!.next('quote_ack');
  second!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'second', odds: 2, max_wager_micros: '5000000' });
  const result = await created;
  assert.equal(result.body.status, 'completed');
  assert.equal((await first!.next('rfq_result')).outcome, 'won');
  assert.equal((await second!.next('rfq_result')).outcome, 'lost');
  await resolveMarket(server, marketA, 'YES'); // leg "up" wins: payout 4 USDC for a 2 USDC stake
  marketA = (await createMarket(server)).market_id;
  netMicros += 2_000_000n;
  await endTest();
});

test('a silent maker lets the quote window run out: timeout, reservation released', async () => {
  await makersNamed(1);
  const result = await api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  assert.equal(result.status, 201);
  assert.equal(result.body.status, 'timeout');
  assert.equal(result.body.quotes_received, 0);
  assert.equal(result.body.error, null);
  await endTest();
});

test('quotes below the minimum fail NO_ACCEPTABLE_QUOTE; a decline closes early', async () => {
  const [quoter, decliner] = await makersNamed(2);
  autoQuote(quoter!, { odds: 1.4 });
  autoQuote(decliner!, { odds: 0, isDecline: true });
  const startMs = Date.now();
  const result = await api().post(
    '/v1/rfq/unsigned?wait_ms=5000',
    unsignedBody([{ market_id: marketA, direction: 'up' }], { min_odds: 1.5 }),
  );
  assert.equal(result.body.status, 'failed');
  assert.equal(result.body.error, 'NO_ACCEPTABLE_QUOTE');
  assert.equal(result.body.quotes_received, 1);
  assert.ok(Date.now() - startMs < 400, 'every maker answered, so it closed before the 400 ms window');
  await endTest();
});

test('FOK with no quote for the whole wager fails INSUFFICIENT_LIQUIDITY', async () => {
  const [maker] = await makersNamed(1);
  autoQuote(maker!, { odds: 2, maxWagerMicros: '1999999' });
  const result = await api().post(
    '/v1/rfq/unsigned?wait_ms=5000',
    unsignedBody([{ market_id: marketA, direction: 'up' }], { order_type: 2 }),
  );
  assert.equal(result.body.status, 'failed');
  assert.equal(result.body.error, 'INSUFFICIENT_LIQUIDITY');
  await endTest();
});

test('IOC fills what the best quote takes and releases the rest', async () => {
  const [maker] = await makersNamed(1);
  autoQuote(maker!, { odds: 2.5, maxWagerMicros: '1500000' });
  const result = await api().post(
    '/v1/rfq/unsigned?wait_ms=5000',
    unsignedBody([{ market_id: marketA, direction: 'up' }], { order_type: 1 }),
  );
  assert.equal(result.body.status, 'completed');
  assert.equal(result.body.filled_wager_micros, '1500000');
  assert.equal(result.body.payout_micros, '3750000');
  const balance = await assertMoneyInvariant(server, user, netMicros);
  assert.equal(balance.atRisk, 1_500_000n);
  await resolveMarket(server, marketA, 'NO'); // lost
  marketA = (await createMarket(server)).market_id;
  netMicros -= 1_500_000n;
  await endTest();
});

test('last look: accept fills, reject and silence fall back to the next quote, all rejecting is MAKER_REJECTED', async () => {
  const [rejecter, silent, accepter] = await makersNamed(3);
  autoQuote(rejecter!, { odds: 3, isLastLook: true, lastLookAnswer: false });
  autoQuote(silent!, { odds: 2.8, isLastLook: true });
  autoQuote(accepter!, { odds: 2.2, isLastLook: true, lastLookAnswer: true });
  const filled = await api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  assert.equal(filled.body.status, 'completed');
  assert.equal(filled.body.odds, 2.2, 'the 3.0 maker rejected and the 2.8 maker stayed silent past the last look');
  await resolveMarket(server, marketA, 'VOID'); // voided leg: the stake comes back
  marketA = (await createMarket(server)).market_id;
  await Promise.all(makers.map((m) => m.close()));

  const [onlyRejecter] = await makersNamed(1);
  autoQuote(onlyRejecter!, { odds: 3, isLastLook: true, lastLookAnswer: false });
  const rejected = await api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  assert.equal(rejected.body.status, 'failed');
  assert.equal(rejected.body.error, 'MAKER_REJECTED');
  await endTest();
});

test('a last_look_response with no last look pending changes nothing and is answered LAST_LOOK_NOT_PENDING', async () => {
  const [maker] = await makersNamed(1);
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const rfq = await maker!.next('rfq');
  maker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'll', odds: 2, max_wager_micros: '9000000', last_look: true });
  await maker!.next('last_look');
  maker!.send({ type: 'last_look_response', request_id: rfq.request_id, quote_id: 'll', accept: false });
  const result = await created;
  assert.deepEqual([result.body.status, result.body.error], ['failed', 'MAKER_REJECTED']);
  // Answered already: a change of mind is out of turn (contract section 7) and fills nothing.
  maker!.send({ type: 'last_look_response', request_id: rfq.request_id, quote_id: 'll', accept: true });
  const error = await maker!.next('error');
  assert.deepEqual([error.code, error.request_id, error.quote_id], ['LAST_LOOK_NOT_PENDING', rfq.request_id, 'll']);
  assert.deepEqual([(await api().get(`/v1/rfq/${rfq.request_id}`)).body.status], ['failed']);
  await endTest();
});

test('GET shows finalizing during a last look, and cancel is then refused', async () => {
  const [maker] = await makersNamed(1);
  const created = await api().post('/v1/rfq/unsigned', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  assert.equal(created.status, 201);
  assert.equal(created.body.status, 'pending');
  const rfq = await maker!.next('rfq');
  maker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'll', odds: 2, max_wager_micros: '9000000', last_look: true });
  const lastLook = await maker!.next('last_look');
  assert.equal(lastLook.fill_wager_micros, '2000000');
  assert.equal((await api().get(`/v1/rfq/${rfq.request_id}`)).body.status, 'finalizing');
  const cancel = await api().post(`/v1/rfq/${rfq.request_id}/cancel`);
  assert.equal(cancel.status, 409);
  assert.equal(cancel.body.code, 'RFQ_NOT_CANCELLABLE');
  maker!.send({ type: 'last_look_response', request_id: rfq.request_id, quote_id: 'll', accept: false });
  const final = await api().get(`/v1/rfq/${rfq.request_id}?wait_ms=5000`);
  assert.equal(final.body.status, 'failed');
  assert.equal(final.body.error, 'MAKER_REJECTED');
  await endTest();
});

test('cancel while pending releases the reservation; cancelling again is 409', async () => {
  const [maker, silent] = await makersNamed(2); // the silent one keeps the RFQ pending for the whole window
  const created = await api().post('/v1/rfq/unsigned', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const rfq = await maker!.next('rfq');
  maker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'q', odds: 2, max_wager_micros: '1000' });
  await maker!.next('quote_ack');
  const cancelled = await api().post(`/v1/rfq/${created.body.request_id}/cancel`);
  assert.equal(cancelled.status, 200);
  assert.deepEqual(cancelled.body, { ...created.body, status: 'cancelled', quotes_received: 1 });
  assert.deepEqual(await maker!.next('rfq_result'), { type: 'rfq_result', request_id: rfq.request_id, outcome: 'cancelled' });
  assert.equal(silent!.socket.pending().filter((m) => m.type === 'rfq_result').length, 0, 'a maker that never quoted hears nothing');
  const again = await api().post(`/v1/rfq/${created.body.request_id}/cancel`);
  assert.deepEqual([again.status, again.body.code], [409, 'RFQ_NOT_CANCELLABLE']);
  await endTest();
});

test("a quote cancelled before selection does not fill; a disconnected maker's quotes are withdrawn", async () => {
  const [canceller, leaver, steady] = await makersNamed(3);
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const [r1, r2, r3] = await Promise.all([canceller!.next('rfq'), leaver!.next('rfq'), steady!.next('rfq')]);
  canceller!.send({ type: 'quote', request_id: r1.request_id, quote_id: 'c', odds: 4, max_wager_micros: '9000000' });
  await canceller!.next('quote_ack');
  canceller!.send({ type: 'quote_cancel', request_id: r1.request_id, quote_id: 'c' });
  leaver!.send({ type: 'quote', request_id: r2.request_id, quote_id: 'l', odds: 3, max_wager_micros: '9000000' });
  await leaver!.next('quote_ack');
  await leaver!.close();
  steady!.send({ type: 'quote', request_id: r3.request_id, quote_id: 's', odds: 1.8, max_wager_micros: '9000000' });
  const result = await created;
  assert.equal(result.body.status, 'completed');
  assert.equal(result.body.odds, 1.8);
  assert.equal(result.body.quotes_received, 3);
  await resolveMarket(server, marketA, 'NO');
  marketA = (await createMarket(server)).market_id;
  netMicros -= 2_000_000n;
  await endTest();
});

test('a leg market that resolves during the quote window fails the RFQ MARKET_CLOSED', async () => {
  const [maker] = await makersNamed(1);
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const rfq = await maker!.next('rfq');
  await resolveMarket(server, marketA, 'YES');
  marketA = (await createMarket(server)).market_id;
  maker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'q', odds: 2, max_wager_micros: '9000000' });
  const result = await created;
  assert.equal(result.body.status, 'failed');
  assert.equal(result.body.error, 'MARKET_CLOSED');
  await endTest();
});

test('a leg market that resolves during a last look is not filled: MARKET_CLOSED, nothing at risk, the maker told expired', async () => {
  const [maker] = await makersNamed(1);
  const atRiskBefore = (await balanceOf(server, user)).atRisk;
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const rfq = await maker!.next('rfq');
  maker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'll', odds: 2, max_wager_micros: '9000000', last_look: true });
  await maker!.next('last_look');
  // The taker's leg has lost: a fill now would hand the maker a bet whose result it knows.
  await resolveMarket(server, marketA, 'NO');
  marketA = (await createMarket(server)).market_id;
  maker!.send({ type: 'last_look_response', request_id: rfq.request_id, quote_id: 'll', accept: true });
  const result = await created;
  assert.deepEqual([result.body.status, result.body.error, result.body.filled_wager_micros], ['failed', 'MARKET_CLOSED', null]);
  assert.deepEqual(await maker!.next('rfq_result'), { type: 'rfq_result', request_id: rfq.request_id, outcome: 'expired' });
  assert.equal((await balanceOf(server, user)).atRisk, atRiskBefore, 'no position was opened on the resolved market');
  await endTest();
});

test('a last look left unanswered to the end falls back to a standing plain quote', async () => {
  // The silent maker holds the RFQ open to its quote deadline; an unsigned RFQ's expiry is one last-look
  // window later, so the ignored last look ends exactly at expiry, and the plain quote must still fill.
  const [lastLooker, plain, silent] = await makersNamed(3);
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const [rfq] = await Promise.all([lastLooker!.next('rfq'), plain!.next('rfq'), silent!.next('rfq')]);
  lastLooker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'best', odds: 3, max_wager_micros: '9000000', last_look: true });
  plain!.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'next', odds: 2, max_wager_micros: '9000000' });
  const lastLook = await lastLooker!.next('last_look');
  assert.equal(lastLook.deadline_ms, rfq.expires_at_ms, 'the last look runs to the expiry');
  const result = await created;
  assert.deepEqual([result.body.status, result.body.odds, result.body.filled_wager_micros], ['completed', 2, '2000000']);
  assert.equal((await plain!.next('rfq_result')).outcome, 'won');
  await resolveMarket(server, marketA, 'NO'); // lost
  marketA = (await createMarket(server)).market_id;
  netMicros -= 2_000_000n;
  await endTest();
});

test('shield_on and anonymous mode hide the taker from makers', async () => {
  const [maker] = await makersNamed(1);
  autoQuote(maker!, { odds: 0, isDecline: true });
  const seen: unknown[] = [];
  maker!.socket.ws.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.type === 'rfq') seen.push(message.taker);
  });
  await api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }], { shield_on: true }));
  await api().patch('/v1/user/preferences', { anonymous_mode_enabled: true });
  await api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  await api().patch('/v1/user/preferences', { anonymous_mode_enabled: false });
  await api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  assert.deepEqual(seen, [null, null, { address: user.address, tier: 0 }]);
  await endTest();
});

test('quote_tolerance is snapshotted at creation: lenient accepts 2% under min_odds, strict does not', async () => {
  const [maker] = await makersNamed(1);
  autoQuote(maker!, { odds: 1.96 });
  await api().patch('/v1/user/preferences', { quote_tolerance: 'lenient' });
  const lenient = await api().post(
    '/v1/rfq/unsigned?wait_ms=5000',
    unsignedBody([{ market_id: marketA, direction: 'up' }], { min_odds: 2 }),
  );
  assert.equal(lenient.body.status, 'completed');
  await api().patch('/v1/user/preferences', { quote_tolerance: 'strict' });
  const strict = await api().post(
    '/v1/rfq/unsigned?wait_ms=5000',
    unsignedBody([{ market_id: marketA, direction: 'up' }], { min_odds: 2 }),
  );
  assert.equal(strict.body.error, 'NO_ACCEPTABLE_QUOTE');
  await api().patch('/v1/user/preferences', { quote_tolerance: 'normal' });
  await resolveMarket(server, marketA, 'NO');
  marketA = (await createMarket(server)).market_id;
  netMicros -= 2_000_000n;
  await endTest();
});

test("a quote after the RFQ closed, or for another maker's audience, is rejected", async () => {
  const [maker] = await makersNamed(1);
  autoQuote(maker!, { odds: 0, isDecline: true });
  const done = await api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  assert.equal(done.body.status, 'timeout');
  const late = await connectNewMaker(server);
  makers.push(late);
  late.send({ type: 'quote', request_id: done.body.request_id, quote_id: 'late', odds: 2, max_wager_micros: '1000' });
  const reject = await late.next('quote_reject');
  assert.deepEqual(reject, { type: 'quote_reject', request_id: done.body.request_id, quote_id: 'late', reason: 'RFQ_CLOSED' });
  await endTest();
});

test('a maker may have 16 quotes standing on one RFQ: the 17th is QUOTE_LIMIT, a cancel frees a place', async () => {
  const [maker, silent] = await makersNamed(2); // the silent one keeps the RFQ open for its whole window
  const created = api().post('/v1/rfq/unsigned?wait_ms=5000', unsignedBody([{ market_id: marketA, direction: 'up' }]));
  const [rfq] = await Promise.all([maker!.next('rfq'), silent!.next('rfq')]);
  const quote = (quoteId: string, odds: number) =>
    maker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: quoteId, odds, max_wager_micros: '9000000' });
  for (let i = 0; i <= 16; i++) quote(`q${i}`, 2 + i / 100);
  for (let i = 0; i < 16; i++) assert.equal((await maker!.next('quote_ack')).quote_id, `q${i}`);
  assert.deepEqual(await maker!.next('quote_reject'), {
    type: 'quote_reject',
    request_id: rfq.request_id,
    quote_id: 'q16',
    reason: 'QUOTE_LIMIT',
  });
  maker!.send({ type: 'quote_cancel', request_id: rfq.request_id, quote_id: 'q0' });
  quote('q17', 2.5);
  assert.equal((await maker!.next('quote_ack')).quote_id, 'q17');
  const result = await created;
  assert.deepEqual([result.body.status, result.body.odds, result.body.quotes_received], ['completed', 2.5, 17]);
  await resolveMarket(server, marketA, 'NO'); // lost
  marketA = (await createMarket(server)).market_id;
  netMicros -= 2_000_000n;
  await endTest();
});

test('cancel racing a fill ends in exactly one of the two, and the money agrees with it', async () => {
  const [maker] = await makersNamed(1);
  let completed = 0;
  for (let i = 0; i < 10; i++) {
    const created = await api().post(
      '/v1/rfq/unsigned',
      unsignedBody([{ market_id: marketA, direction: 'up' }], { wager_micros: 1_000_000 }),
    );
    const rfq = await maker!.next('rfq');
    maker!.send({ type: 'quote', request_id: rfq.request_id, quote_id: `race-${i}`, odds: 2, max_wager_micros: '9000000' });
    const cancel = await api().post(`/v1/rfq/${created.body.request_id}/cancel`);
    const final = await api().get(`/v1/rfq/${created.body.request_id}?wait_ms=5000`);
    const outcome = (await maker!.next('rfq_result')).outcome;
    if (cancel.status === 200) {
      assert.deepEqual([final.body.status, outcome], ['cancelled', 'cancelled']);
    } else {
      assert.deepEqual([cancel.status, cancel.body.code], [409, 'RFQ_NOT_CANCELLABLE']);
      assert.deepEqual([final.body.status, outcome], ['completed', 'won']);
      completed += 1;
    }
  }
  const balance = await assertMoneyInvariant(server, user, netMicros);
  assert.equal(balance.atRisk, BigInt(completed) * 1_000_000n, 'exactly the fills that won the race are at risk');
  await resolveMarket(server, marketA, 'NO');
  marketA = (await createMarket(server)).market_id;
  netMicros -= BigInt(completed) * 1_000_000n;
  await endTest();
});
