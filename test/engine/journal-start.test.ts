// The journal engine's start on a real server (engine/first-start.ts): a data directory of today's layout,
// written by the lmdb engine, becomes the owners' first records with every balance to the micro; one with
// RFQs still active is refused with one line; a directory the owners ran on is refused by the lmdb engine
// and by another shard count; and two shards killed -9 mid-burst, with fills whose maker lives on the other
// shard, lose no acknowledged RFQ or money (the ledger check runs at the restart's stop, as every stop's does).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ownerOfName } from '../../src/engine/routing.js';
import { makerAccount } from '../../src/records/ledger.js';
import { client } from '../helpers/http.js';
import { createMarket } from '../helpers/markets.js';
import { connectMaker, connectNewMaker } from '../helpers/makers.js';
import { assertMoneyInvariant, autoQuote, unsignedBody } from '../helpers/rfq.js';
import { restartServer, startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet } from '../helpers/users.js';

const LMDB = { PARLAYD_ENGINE: 'lmdb' };
const JOURNAL = { PARLAYD_ENGINE: 'journal' };

/** A start that must fail: its one line on stderr. */
async function refusedStart(previous: TestServer, env: Record<string, string>): Promise<string> {
  const failed = await restartServer(previous, env).then(
    async (server) => {
      await server.stop();
      return null;
    },
    (err: Error) => err.message,
  );
  assert.ok(failed !== null, 'the start was refused');
  return failed;
}

test('a directory of the lmdb engine starts on the journal engine with every balance, and trades on', async () => {
  const first = await startServer({ env: LMDB });
  const user = await loginWallet(first);
  const fundKey = randomUUID();
  await credit(first, user.address, 50_000_000, fundKey);
  const market = (await createMarket(first)).market_id;
  const maker = await connectNewMaker(first);
  autoQuote(maker, { odds: 2, maxWagerMicros: '100000000' });
  const filled = await client(first.baseUrl, user.token).post(
    '/v1/rfq/unsigned?wait_ms=5000',
    unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 2_000_000 }),
  );
  assert.equal(filled.body.status, 'completed');
  const makerBefore = (await client(first.baseUrl, maker.sessionToken).get('/v1/mm/balance')).body;
  await maker.close();
  assert.equal(await first.stop(), 0);

  const second = await restartServer(first, JOURNAL);
  try {
    // The lmdb engine's credit keys are still known (the owners look them up in LMDB): a replay moves
    // nothing, another amount under the same key is a conflict.
    await credit(second, user.address, 50_000_000, fundKey);
    const conflict = await client(second.baseUrl, second.adminToken).post('/v1/admin/users/credit', {
      wallet: user.address,
      amount_micros: 1,
      idempotency_key: fundKey,
    });
    assert.deepEqual([conflict.status, conflict.body.code], [409, 'IDEMPOTENCY_CONFLICT']);
    // Every bucket as the lmdb engine left it: the user's at risk, the maker's locked.
    const balance = await assertMoneyInvariant(second, { ...user }, 50_000_000n);
    assert.deepEqual([balance.available, balance.atRisk], [48_000_000n, 2_000_000n]);
    // The old position settles on the new engine, and a new RFQ fills there.
    const again = await connectMaker(second, maker);
    assert.deepEqual((await client(second.baseUrl, again.sessionToken).get('/v1/mm/balance')).body, makerBefore);
    autoQuote(again, { odds: 2, maxWagerMicros: '100000000' });
    const next = await client(second.baseUrl, user.token).post(
      '/v1/rfq/unsigned?wait_ms=5000',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 1_000_000 }),
    );
    assert.equal(next.body.status, 'completed');
    const admin = client(second.baseUrl, second.adminToken);
    assert.equal((await admin.post(`/v1/admin/markets/${market}/resolve`, { outcome: 'YES' })).status, 200);
    const settled = await waitForAtRisk(second, user, 0n);
    assert.equal(settled.available, 53_000_000n, 'both positions won at odds 2: +2,000,000 and +1,000,000');
    await again.close();
  } finally {
    assert.equal(await second.stop(), 0);
  }
  // The lmdb engine no longer may write this directory: LMDB is only the owners' read model now.
  assert.match(await refusedStart(second, LMDB), /owned by the journal engine: start it with PARLAYD_ENGINE=journal/);
  assert.match(await refusedStart(second, { ...JOURNAL, PARLAYD_SHARDS: '2' }), /journal engine has 1 shards .* PARLAYD_SHARDS=1/);
});

test('a directory of the lmdb engine with RFQs still active is refused by the journal engine, with one line', async () => {
  const first = await startServer({ env: { ...LMDB, PARLAYD_QUOTE_WINDOW_MS: '60000' } });
  const user = await loginWallet(first);
  await credit(first, user.address, 10_000_000);
  const market = (await createMarket(first)).market_id;
  // A maker that hears the RFQ and never answers keeps it quoting (with none connected it ends at once).
  const silent = await connectNewMaker(first);
  const created = await client(first.baseUrl, user.token).post('/v1/rfq/unsigned', unsignedBody([{ market_id: market, direction: 'up' }]));
  assert.equal(created.status, 201);
  await silent.next('rfq');
  await first.kill();
  void silent.close();
  const line = await refusedStart(first, JOURNAL);
  assert.match(line, /data directory error: the data directory has 1 active RFQs: start it once with PARLAYD_ENGINE=lmdb/);
  // The lmdb engine fails it at start (contract section 6), and then the journal engine takes the directory.
  const lmdb = await restartServer(first, LMDB);
  assert.equal(await lmdb.stop(), 0);
  const journal = await restartServer(lmdb, JOURNAL);
  try {
    const after = await client(journal.baseUrl, user.token).get(`/v1/rfq/${created.body.request_id}`);
    assert.deepEqual([after.body.status, after.body.error], ['failed', 'SERVICE_RESTARTED']);
    await assertMoneyInvariant(journal, user, 10_000_000n);
  } finally {
    assert.equal(await journal.stop(), 0);
  }
});

async function waitForAtRisk(server: TestServer, user: { token: string }, atRisk: bigint) {
  for (let i = 0; i < 200; i++) {
    const body = (await client(server.baseUrl, user.token).get('/v1/user/balance')).body;
    if (BigInt(body.at_risk_micros) === atRisk) return { available: BigInt(body.available_micros), atRisk };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`at_risk never reached ${atRisk}`);
}

test('two shards killed -9 mid-burst, with fills that lock a maker on the other shard: nothing acknowledged is lost, nothing stays held', async () => {
  const FUNDS = 200_000_000n;
  const server = await startServer({ env: { ...JOURNAL, PARLAYD_SHARDS: '2', PARLAYD_QUOTE_WINDOW_MS: '2000' } });
  const takers = await Promise.all([0, 1, 2, 3].map(() => loginWallet(server)));
  for (const taker of takers) await credit(server, taker.address, Number(FUNDS));
  const market = (await createMarket(server)).market_id;
  // Four quoting makers: with two shards, about half the fills lock their maker's liability on the other one.
  const quoters = await Promise.all([0, 1, 2, 3].map(() => connectNewMaker(server)));
  const shardOfMaker = (address: string) => ownerOfName(2)(makerAccount(address));
  while (new Set(quoters.map((q) => shardOfMaker(q.address))).size < 2) quoters.push(await connectNewMaker(server));
  for (const quoter of quoters) autoQuote(quoter, { odds: 2, maxWagerMicros: '1000000000' });
  const silent = await connectNewMaker(server); // keeps RFQs quoting until their window ends
  const acknowledged: Array<{ taker: (typeof takers)[number]; id: string }> = [];
  let killed = false;
  await Promise.all(
    Array.from({ length: 60 }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 5));
      const taker = takers[i % takers.length]!;
      const body = unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 1_000_000 });
      try {
        const result = await client(server.baseUrl, taker.token).post(`/v1/rfq/unsigned${i % 2 === 0 ? '?wait_ms=3000' : ''}`, body);
        if (result.status === 201) acknowledged.push({ taker, id: result.body.request_id as string });
      } catch {
        assert.ok(killed, 'a request failed before the kill');
      }
      if (acknowledged.length === 25 && !killed) {
        killed = true;
        await server.kill();
      }
    }),
  );
  assert.ok(killed, `the burst was acknowledged ${acknowledged.length} times`);
  for (const maker of [...quoters, silent]) void maker.close();
  // The restart's stop runs the ledger check over both shards' read models, as every stop does.
  const restarted = await restartServer(server);
  try {
    const atRisk = new Map<string, bigint>();
    for (const { taker, id } of acknowledged) {
      const stored = await client(restarted.baseUrl, taker.token).get(`/v1/rfq/${id}`);
      assert.equal(stored.status, 200, `acknowledged ${id} was lost`);
      assert.ok(['completed', 'failed', 'timeout'].includes(stored.body.status), `${id} is still ${stored.body.status}`);
      if (stored.body.status === 'completed')
        atRisk.set(taker.address, (atRisk.get(taker.address) ?? 0n) + BigInt(stored.body.filled_wager_micros));
    }
    for (const taker of takers) {
      const balance = await assertMoneyInvariant(restarted, taker, FUNDS);
      assert.equal(balance.reserved, 0n, 'every interrupted RFQ released its reservation');
      // Exactly the durable fills are at risk: the acknowledged ones, and any made durable as the kill came.
      const completed = await client(restarted.baseUrl, taker.token).get('/v1/user/rfqs?status=completed&limit=100');
      const durable = (completed.body.rfqs as Array<{ filled_wager_micros: string }>).reduce(
        (sum, r) => sum + BigInt(r.filled_wager_micros),
        0n,
      );
      assert.ok(durable >= (atRisk.get(taker.address) ?? 0n), 'every acknowledged fill is durable');
      assert.equal(balance.atRisk, durable, 'the stake at risk is exactly the durable fills');
    }
  } finally {
    assert.equal(await restarted.stop(), 0);
  }
});
