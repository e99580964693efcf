// Crash safety (contract section 6, issue 5): kill -9 the server during a burst of RFQs, restart it on the
// same data, and prove every acknowledged request_id is found, every replay key still maps to it, nothing
// stays reserved, and a fill that was made durable stayed completed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, type HttpResult } from '../helpers/http.js';
import { restartServer, startServer } from '../helpers/server.js';
import { credit, loginWallet } from '../helpers/users.js';
import { connectNewMaker } from '../helpers/makers.js';
import { createMarket } from '../helpers/markets.js';
import { assertMoneyInvariant, autoQuote, fundedTaker, signedOrder, unsignedBody } from '../helpers/rfq.js';
import { shardOfUser } from '../../src/rfq/ids.js';

const FUNDS = 1_000_000_000n;

test('kill -9 during a burst: every acknowledged RFQ survives, ends terminal, and no money stays reserved', async () => {
  // A long quote window keeps many RFQs active at the moment of the kill.
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '2000' } });
  const user = await loginWallet(server);
  await credit(server, user.address, Number(FUNDS));
  const market = (await createMarket(server)).market_id;
  const quoter = await connectNewMaker(server);
  const silent = await connectNewMaker(server); // never answers: RFQs it sees stay pending until the window ends
  autoQuote(quoter, { odds: 2, maxWagerMicros: '1000000000' });
  const api = client(server.baseUrl, user.token);

  const acknowledged: { body: Record<string, unknown>; path: string; result: HttpResult }[] = [];
  let killed = false;
  const submissions = Array.from({ length: 80 }, async (_, i) => {
    await new Promise((r) => setTimeout(r, i * 5));
    const isSigned = i % 4 === 0;
    const path = isSigned ? '/v1/rfq' : '/v1/rfq/unsigned';
    const body = isSigned
      ? {
          order: await signedOrder(user.wallet, {
            wager_micros: 1_000_000,
            min_odds: 1.5,
            legs: [{ market_id: market, direction: 'up' }],
            nonce: 1000 + i,
            expires_at_ms: Date.now() + 600_000,
            shield_on: false,
          }),
        }
      : unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 1_000_000 });
    try {
      const result = await api.post(path, body);
      if (result.status === 201) acknowledged.push({ body, path, result });
    } catch {
      assert.ok(killed, 'a request failed before the kill');
    }
    // Kill while RFQs are both freshly acknowledged and still quoting.
    if (acknowledged.length === 30 && !killed) {
      killed = true;
      await server.kill();
    }
  });
  await Promise.all(submissions);
  assert.ok(killed && acknowledged.length >= 30, `the burst was acknowledged ${acknowledged.length} times`);
  void quoter.close();
  void silent.close();

  const restarted = await restartServer(server);
  try {
    const after = client(restarted.baseUrl, user.token);
    let completedWagerMicros = 0n;
    for (const { body, path, result } of acknowledged) {
      const id = result.body.request_id as string;
      const stored = await after.get(`/v1/rfq/${id}`);
      assert.equal(stored.status, 200, `acknowledged ${id} was lost`);
      assert.ok(['completed', 'failed', 'timeout'].includes(stored.body.status), `${id} is still ${stored.body.status}`);
      if (stored.body.status === 'failed') assert.equal(stored.body.error, 'SERVICE_RESTARTED');
      if (stored.body.status === 'completed') completedWagerMicros += BigInt(stored.body.filled_wager_micros);
      const replay = await after.post(path, body);
      assert.deepEqual([replay.status, replay.body.request_id], [200, id], 'the replay key still maps to the acknowledged id');
    }
    const balance = await assertMoneyInvariant(restarted, user, FUNDS);
    assert.equal(balance.reserved, 0n, 'every interrupted RFQ released its reservation');
    assert.equal(balance.atRisk, completedWagerMicros, 'exactly the durable fills are at risk');
    const failedOnRestart = restarted.logs.find((l) => l['msg'] === 'RFQs active at the last stop ended failed SERVICE_RESTARTED');
    assert.ok(failedOnRestart !== undefined, 'the kill caught RFQs in flight (else the test proved nothing)');
  } finally {
    await restarted.stop();
  }
});

test('SIGTERM while a shard commits: the service stops (exit 0), and a restart releases what was still active', async () => {
  // Stopping a shard used to end its thread wherever it was; inside an LMDB commit the thread then never
  // finished exiting and the service hung on SIGTERM. Here the stop lands on a large commit: the silent
  // maker leaves, which ends every RFQ it held open in one group commit, as the SIGTERM arrives.
  const server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '30000' } });
  const { user, market, api } = await fundedTaker(server, Number(FUNDS));
  const silent = await connectNewMaker(server);
  const answers = await Promise.all(
    Array.from({ length: 60 }, () =>
      api.post('/v1/rfq/unsigned', unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 1_000_000 })),
    ),
  );
  const acknowledged = answers.map((a) => {
    assert.equal(a.status, 201);
    return a.body.request_id as string;
  });
  void silent.close();
  assert.equal(await server.stop(), 0, `graceful stop exits 0; stderr: ${server.stderr.join('\n')}`);

  const restarted = await restartServer(server);
  try {
    const after = client(restarted.baseUrl, user.token);
    for (const id of acknowledged) {
      const stored = await after.get(`/v1/rfq/${id}`);
      assert.equal(stored.status, 200, `acknowledged ${id} was lost`);
      assert.ok(['failed', 'timeout'].includes(stored.body.status), `${id} is ${stored.body.status}`);
    }
    const balance = await assertMoneyInvariant(restarted, user, FUNDS);
    assert.equal(balance.reserved, 0n, 'every RFQ active at the stop released its reservation');
  } finally {
    await restarted.stop();
  }
});

test('after a restart with fewer shards, an RFQ made on a shard that no longer runs is still found, and cancelling it is 409', async () => {
  // Request ids name their shard (src/rfq/ids.ts); PARLAYD_SHARDS defaults to the machine's cores − 1, so a
  // move to a smaller machine is enough to leave ids naming a shard that no longer runs.
  // The lmdb engine: the journal engine refuses another shard count, since its balances live on the shards
  // (test/engine/journal-start.test.ts).
  const server = await startServer({ env: { PARLAYD_SHARDS: '4', PARLAYD_ENGINE: 'lmdb' } });
  let id: string;
  let taker: Awaited<ReturnType<typeof fundedTaker>>;
  try {
    taker = await fundedTaker(server, 10_000_000);
    for (let tries = 0; shardOfUser(taker.user.userId, 4) === 0 && tries < 50; tries++) taker = await fundedTaker(server, 10_000_000);
    assert.notEqual(shardOfUser(taker.user.userId, 4), 0, 'a taker on a shard other than 0');
    // With no maker connected the RFQ ends `timeout` at once.
    const created = await taker.api.post('/v1/rfq/unsigned?wait_ms=2000', unsignedBody([{ market_id: taker.market, direction: 'up' }]));
    assert.deepEqual([created.status, created.body.status], [201, 'timeout']);
    id = created.body.request_id as string;
  } finally {
    await server.stop();
  }

  const restarted = await restartServer(server, { PARLAYD_SHARDS: '1' });
  try {
    const api = client(restarted.baseUrl, taker.user.token);
    assert.deepEqual([(await api.get(`/v1/rfq/${id}`)).body.status], ['timeout']);
    const cancel = await api.post(`/v1/rfq/${id}/cancel`);
    assert.deepEqual([cancel.status, cancel.body.code], [409, 'RFQ_NOT_CANCELLABLE']);
    const stranger = await loginWallet(restarted);
    const notTheirs = await client(restarted.baseUrl, stranger.token).post(`/v1/rfq/${id}/cancel`);
    assert.deepEqual([notTheirs.status, notTheirs.body.code], [404, 'RFQ_NOT_FOUND']);
  } finally {
    await restarted.stop();
  }
});
