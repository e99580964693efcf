// A create held to share its RFQ's terminal commit (shard.ts commitCreate, PARLAYD_CREATE_COALESCE_MS): when
// the taker's answer waits for the result (wait_ms), the create and the terminal write commit together. These
// prove what that must not change: the answer still follows a durable create (found after a kill -9, replay
// key kept), a wait that ends before the RFQ does answers a durable `pending` on time, the wager of a
// held create is spent for every other movement of the taker's money (its shard decided it already), and a
// held create whose fill comes back UNCOVERED is still found by a restart (its RFQ goes on into a last look).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { restartServer, startServer } from '../helpers/server.js';
import { assertApiError } from '../helpers/errors.js';
import { connectMaker, connectNewMaker, registerMaker, type ConnectedMaker } from '../helpers/makers.js';
import { waitFor } from '../helpers/wait.js';
import { assertMoneyInvariant, autoQuote, balanceOf, fundedTaker, unsignedBody } from '../helpers/rfq.js';
import { contestConfig, createContest, enter, up } from '../helpers/contests.js';
import { createMarket } from '../helpers/markets.js';

const WAGER = 2_000_000;
/** The held create is the lmdb engine's (the journal engine's group commit shares one flush among a turn's records). */
const LMDB_ENGINE = { PARLAYD_ENGINE: 'lmdb' };

test('a held create commits with its fill: the answer is durable across a kill -9 and the replay key is kept', async () => {
  const server = await startServer({ env: { ...LMDB_ENGINE, PARLAYD_CREATE_COALESCE_MS: '1000' } });
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
  const server = await startServer({ env: { ...LMDB_ENGINE, PARLAYD_CREATE_COALESCE_MS: '400', PARLAYD_QUOTE_WINDOW_MS: '10000' } });
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
  const server = await startServer({ env: { ...LMDB_ENGINE, PARLAYD_CREATE_COALESCE_MS: '1000', PARLAYD_QUOTE_WINDOW_MS: '10000' } });
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

test('a held create whose fill comes back UNCOVERED, killed -9 in the last look that follows, ends SERVICE_RESTARTED with its wager released', async () => {
  // One shard, so both RFQs close in one turn and their writes share one group commit; windows long enough
  // that only the makers end quoting and the last look.
  const server = await startServer({
    env: {
      ...LMDB_ENGINE,
      PARLAYD_SHARDS: '1',
      PARLAYD_CREATE_COALESCE_MS: '1000',
      PARLAYD_QUOTE_WINDOW_MS: '10000',
      PARLAYD_LAST_LOOK_MS: '10000',
    },
  });
  const funds = 10 * WAGER;
  const { user, market, api } = await fundedTaker(server, funds);
  let uncoveredId = '';
  let filled: Record<string, unknown> = {};
  try {
    // At odds 2 a fill of WAGER locks WAGER of the maker's collateral: 1.5 × WAGER covers one fill, not two.
    const poor = await connectMaker(server, await registerMaker(server, undefined, 'poor', 1.5 * WAGER));
    const lastLooker = await connectNewMaker(server);
    const closer = await connectNewMaker(server); // never answers; its leaving closes both RFQs in one shard turn
    autoQuote(poor, { odds: 2 });
    autoQuote(lastLooker, { odds: 1.8, isLastLook: true }); // silent in its last look
    const body = () => unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER });
    const answers = [api.post('/v1/rfq/unsigned?wait_ms=10000', body()), api.post('/v1/rfq/unsigned?wait_ms=10000', body())];
    const acks = (maker: ConnectedMaker) => maker.socket.received.filter((m) => m.type === 'quote_ack').length;
    await waitFor(() => acks(poor) === 2 && acks(lastLooker) === 2, { what: 'both makers quoting both RFQs', intervalMs: 5 });
    // Both creates are still held (to commit with their ends), else this would not test the held create's commit.
    assert.equal((await balanceOf(server, user)).reserved, 0n, 'the creates are still held');

    await closer.close();
    // The first RFQ fills with the poor maker; the second's fill, decided in the same turn against the same
    // collateral, comes back UNCOVERED in the same commit as its create, and goes on to the last-look quote.
    const lastLook = await waitFor(() => lastLooker.socket.received.find((m) => m.type === 'last_look') ?? false, {
      what: 'a last look',
      intervalMs: 5,
    });
    uncoveredId = lastLook.request_id;
    filled = (await Promise.race(answers)).body;
    assert.deepEqual([filled['status'], filled['odds']], ['completed', 2]);
    assert.notEqual(filled['request_id'], uncoveredId);
    assert.equal((await api.get(`/v1/rfq/${uncoveredId}`)).body.status, 'finalizing');
  } finally {
    await server.kill();
  }

  const restarted = await restartServer(server);
  try {
    const after = client(restarted.baseUrl, user.token);
    const ended = await after.get(`/v1/rfq/${uncoveredId}`);
    assert.deepEqual([ended.status, ended.body.status, ended.body.error], [200, 'failed', 'SERVICE_RESTARTED']);
    assertApiError(await after.post(`/v1/rfq/${uncoveredId}/cancel`), 409, 'RFQ_NOT_CANCELLABLE');
    assert.deepEqual((await after.get(`/v1/rfq/${filled['request_id'] as string}`)).body, filled);
    const balance = await assertMoneyInvariant(restarted, user, BigInt(funds));
    assert.deepEqual([balance.available, balance.reserved, balance.atRisk], [BigInt(funds - WAGER), 0n, BigInt(WAGER)]);
  } finally {
    // stop() runs the ledger check on what the restarted service leaves.
    assert.equal(await restarted.stop(), 0);
  }
});
