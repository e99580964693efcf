// The taker's shard alone decides a new RFQ (issue 16; shard.ts create): replay, balance and acceptance, and
// only then are the makers told, while its create commits. A refused RFQ is never heard of by any maker, and
// every other movement of the taker's money (contest entries, credits) is decided by the same shard, so they
// cannot spend one balance twice whichever order they race in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../helpers/server.js';
import { Wallet } from 'ethers';
import { client } from '../helpers/http.js';
import { connectMaker, connectNewMaker, registerMaker } from '../helpers/makers.js';
import { assertMoneyInvariant, balanceOf, fundedTaker, rfqIdsHeard, unsignedBody } from '../helpers/rfq.js';
import { contestConfig, createContest, enter, getDetail, up } from '../helpers/contests.js';
import { createMarket } from '../helpers/markets.js';
import { credit, loginWallet } from '../helpers/users.js';

const WAGER = 2_000_000;

test('of two RFQs the balance covers once, makers hear of one, and the other is 422 INSUFFICIENT_BALANCE', async () => {
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
    const { market, api } = await fundedTaker(server, 10 * WAGER);
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

test('a shard at its active-RFQ limit refuses with 503 and Retry-After; no maker hears of it, its key stays unused', async () => {
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000', PARLAYD_MAX_ACTIVE_RFQS_PER_SHARD: '1' } });
  try {
    const { user, market, api } = await fundedTaker(server, 10 * WAGER);
    const maker = await connectNewMaker(server);
    const leg = { market_id: market, direction: 'up' as const };
    const open = await api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }));
    assert.equal(open.status, 201);

    const body = unsignedBody([leg], { wager_micros: WAGER });
    const refused = await api.post('/v1/rfq/unsigned?wait_ms=2000', body);
    assert.deepEqual([refused.status, refused.body.code], [503, 'OVERLOADED']);
    assert.equal(refused.headers.get('retry-after'), '1', 'a 503 says when to retry (contract section 2)');
    assert.deepEqual(await rfqIdsHeard(maker), [open.body.request_id], 'the refused RFQ reached no maker');
    const balance = await assertMoneyInvariant(server, user, BigInt(10 * WAGER));
    assert.equal(balance.reserved, BigInt(WAGER));
    // Its idempotency key was not consumed: once the first RFQ ends, the same request is a new RFQ (201).
    assert.equal((await api.post(`/v1/rfq/${open.body.request_id}/cancel`)).status, 200);
    const again = await api.post('/v1/rfq/unsigned', body);
    assert.equal(again.status, 201);
    assert.deepEqual(await rfqIdsHeard(maker), [open.body.request_id, again.body.request_id]);
    await api.post(`/v1/rfq/${again.body.request_id}/cancel`);
    await maker.close();
  } finally {
    await server.stop();
  }
});

test('40 RFQs at once against a balance for 3: three are accepted, and every maker hears of exactly those three', async () => {
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000' } });
  try {
    const { user, market, api } = await fundedTaker(server, 3 * WAGER);
    const makers = await Promise.all([1, 2].map(() => connectNewMaker(server))); // silent: the RFQs stay open
    const leg = { market_id: market, direction: 'up' as const };
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }))),
    );
    const accepted = answers.filter((a) => a.status === 201).map((a) => a.body.request_id as string);
    assert.equal(accepted.length, 3);
    for (const refused of answers.filter((a) => a.status !== 201)) {
      assert.deepEqual([refused.status, refused.body.code], [422, 'INSUFFICIENT_BALANCE']);
    }
    for (const maker of makers) assert.deepEqual((await rfqIdsHeard(maker)).sort(), [...accepted].sort());
    const balance = await assertMoneyInvariant(server, user, BigInt(3 * WAGER));
    assert.deepEqual([balance.available, balance.reserved], [0n, BigInt(3 * WAGER)]);
    for (const id of accepted) assert.equal((await api.post(`/v1/rfq/${id}/cancel`)).status, 200);
    for (const maker of makers) await maker.close();
  } finally {
    await server.stop();
  }
});

test('RFQs, contest entries and credits racing on one balance: nothing is spent twice, and the money adds up', async () => {
  // Two shards: the contest's entries, the credits and the RFQs of one user all go to the user's shard.
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000', PARLAYD_SHARDS: '2' } });
  try {
    const { user, market, api } = await fundedTaker(server, 5 * WAGER);
    const maker = await connectNewMaker(server); // silent: accepted RFQs stay open with their wager reserved
    const contestMarket = await createMarket(server, 'race');
    const contest = await createContest(server, contestConfig([contestMarket.market_id], { bet_amount_micros: WAGER, entry_cap: 100 }));
    const leg = { market_id: market, direction: 'up' as const };
    const [rfqs, entries, credits] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER })))),
      Promise.all(Array.from({ length: 10 }, () => enter(server, user, contest.contest_id, [up(contestMarket.market_id)]))),
      Promise.all(Array.from({ length: 5 }, () => credit(server, user.address, WAGER))),
    ]);
    assert.equal(credits.length, 5);
    const acceptedRfqs = rfqs.filter((r) => r.status === 201);
    const acceptedEntries = entries.filter((e) => e.status === 201);
    for (const refused of [...rfqs, ...entries].filter((r) => r.status !== 201)) {
      assert.deepEqual([refused.status, refused.body.code], [422, 'INSUFFICIENT_BALANCE']);
    }
    const spent = acceptedRfqs.length + acceptedEntries.length;
    // The first five stakes were always covered; the credits may or may not have come in time for more.
    assert.ok(spent >= 5 && spent <= 10, `${spent} stakes accepted`);
    const balance = await assertMoneyInvariant(server, user, BigInt(10 * WAGER));
    assert.deepEqual([balance.reserved, balance.available], [BigInt(spent * WAGER), BigInt((10 - spent) * WAGER)]);
    assert.deepEqual(
      (await rfqIdsHeard(maker)).sort(),
      acceptedRfqs.map((r) => r.body.request_id as string).sort(),
      'makers heard of the accepted RFQs and of no other',
    );
    const detail = await getDetail(server, contest.contest_id);
    assert.equal(detail.body.entries_filled, acceptedEntries.length);
    for (const r of acceptedRfqs) await api.post(`/v1/rfq/${r.body.request_id}/cancel`);
    assert.equal((await balanceOf(server, user)).reserved, BigInt(acceptedEntries.length * WAGER));
    await maker.close();
  } finally {
    await server.stop();
  }
});

test('an RFQ sent to no maker at all ends timeout at once, its wager released', async () => {
  // A quote window far longer than the test: only "every maker in the audience answered" (none) can end it.
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '60000' } });
  try {
    const { user, market, api } = await fundedTaker(server, 10 * WAGER);
    const answered = await api.post(
      '/v1/rfq/unsigned?wait_ms=5000',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER }),
    );
    assert.deepEqual([answered.status, answered.body.status, answered.body.quotes_received], [201, 'timeout', 0]);
    const balance = await assertMoneyInvariant(server, user, BigInt(10 * WAGER));
    assert.equal(balance.reserved, 0n);
  } finally {
    await server.stop();
  }
});

test('wait_ms places are bounded: past PARLAYD_MAX_WAITERS a request that would wait is 503 before anything starts', async () => {
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000', PARLAYD_MAX_WAITERS: '2' } });
  try {
    const { user, market, api } = await fundedTaker(server, 10 * WAGER);
    const maker = await connectNewMaker(server); // silent: the RFQ stays pending
    const leg = { market_id: market, direction: 'up' as const };
    const open = await api.post('/v1/rfq/unsigned', unsignedBody([leg], { wager_micros: WAGER }));
    const id = open.body.request_id as string;
    const waiting = [1, 2].map(() => api.get(`/v1/rfq/${id}?wait_ms=5000`));
    await new Promise((r) => setTimeout(r, 200)); // both are holding their places
    const third = await api.get(`/v1/rfq/${id}?wait_ms=1000`);
    assert.deepEqual([third.status, third.body.code, third.headers.get('retry-after')], [503, 'OVERLOADED', '1']);
    const create = await api.post('/v1/rfq/unsigned?wait_ms=1000', unsignedBody([leg], { wager_micros: WAGER }));
    assert.deepEqual([create.status, create.body.code], [503, 'OVERLOADED']);
    assert.deepEqual(await rfqIdsHeard(maker), [id], 'the refused create reached no shard and no maker');
    assert.equal((await balanceOf(server, user)).reserved, BigInt(WAGER));
    // A GET without wait_ms needs no place.
    assert.equal((await api.get(`/v1/rfq/${id}`)).status, 200);
    assert.equal((await api.post(`/v1/rfq/${id}/cancel`)).status, 200);
    for (const answer of await Promise.all(waiting)) assert.deepEqual([answer.status, answer.body.status], [200, 'cancelled']);
    // The places are given back.
    const later = await api.post('/v1/rfq/unsigned?wait_ms=100', unsignedBody([leg], { wager_micros: WAGER }));
    assert.equal(later.status, 201);
    await api.post(`/v1/rfq/${later.body.request_id}/cancel`);
    await maker.close();
  } finally {
    await server.stop();
  }
});

test('a maker never fills its own wallet: its quote is OWN_RFQ and counts as a decline; a maker address cannot log in as a user', async () => {
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '10000' } });
  try {
    const wallet = Wallet.createRandom();
    const user = await loginWallet(server, wallet);
    await credit(server, user.address, 10 * WAGER);
    const market = (await createMarket(server)).market_id;
    // Registered as a maker after its user logged in: the user session still works, the maker connects.
    await registerMaker(server, wallet);
    const self = await connectMaker(server, wallet);
    const api = client(server.baseUrl, user.token);
    const answer = api.post(
      '/v1/rfq/unsigned?wait_ms=5000',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER }),
    );
    const rfq = await self.next('rfq');
    self.send({ type: 'quote', request_id: rfq.request_id, quote_id: 'q', odds: 2, max_wager_micros: String(WAGER) });
    const reject = await self.next('quote_reject');
    assert.deepEqual([reject.request_id, reject.reason], [rfq.request_id, 'OWN_RFQ']);
    // The only maker answered (as a decline): the RFQ closes at once rather than at the 10 s window.
    const ended = await answer;
    assert.deepEqual([ended.status, ended.body.status, ended.body.quotes_received], [201, 'timeout', 0]);
    await assertMoneyInvariant(server, user, BigInt(10 * WAGER));
    await self.close();

    const again = await loginWallet(server, wallet).then(
      () => null,
      (err: Error) => err.message,
    );
    assert.match(again ?? '', /"code":"FORBIDDEN"/);
  } finally {
    await server.stop();
  }
});
