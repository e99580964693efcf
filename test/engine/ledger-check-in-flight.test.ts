// The ledger check during traffic with two shards (src/ledger/check.ts). Money between two owners reaches
// LMDB in halves, each in its own owner's commit, so a check that runs while credits, fills and settlements
// cross between the shards reads snapshots that hold one half of some transfers and not yet the other. Every
// such check must still be ok: the sides LMDB holds agree with the accounts, and the money between the
// halves is `in_transit_micros`. (read-model.test.ts shows the same on chosen halves, deterministically.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ownerOfName } from '../../src/engine/routing.js';
import { makerAccount, userAccount } from '../../src/records/ledger.js';
import { rfqRef } from '../../src/records/rfqs.js';
import { admin, client } from '../helpers/http.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { connectNewMaker } from '../helpers/makers.js';
import { autoQuote, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, restartServer, startServer } from '../helpers/server.js';
import { openStore } from '../../src/store/db.js';
import { credit, loginWallet } from '../helpers/users.js';

interface Check {
  ok: boolean;
  total_micros: string;
  credited_micros: string;
  withdrawn_micros: string;
  in_transit_micros: string;
  differences: unknown[];
}

test('two shards: every ledger check taken while money crosses between them is ok, what is between the halves in transit', async (t) => {
  const server = await startServer({ env: { PARLAYD_ENGINE: 'journal', PARLAYD_SHARDS: '2' } });
  try {
    const shardOf = ownerOfName(2);
    // Six random users all hash to one shard once in 32 runs: more are logged in until both shards have takers.
    const takers = await Promise.all(Array.from({ length: 6 }, () => loginWallet(server)));
    while (new Set(takers.map((t) => shardOf(userAccount(t.userId)))).size < 2) takers.push(await loginWallet(server));
    const makers = [await connectNewMaker(server), await connectNewMaker(server)];
    while (new Set(makers.map((m) => shardOf(makerAccount(m.address)))).size < 2) makers.push(await connectNewMaker(server));
    for (const maker of makers) autoQuote(maker, { odds: 2, maxWagerMicros: '1000000000' });

    const checks: Check[] = [];
    let isLoading = true;
    const checking = (async () => {
      while (isLoading) {
        const res = await admin(server).get<Check>('/v1/admin/ledger/check');
        assert.equal(res.status, 200, JSON.stringify(res.body));
        checks.push(res.body);
      }
    })();

    // Rounds of credits decided by their key's owner for accounts on either shard, fills, and two markets
    // resolved at once (the takers' winnings and the makers' takings cross between the shards), until the
    // checks beside them have read enough snapshots.
    for (let round = 0; round < 60 && checks.length < 8; round++) {
      const [won, lost] = [(await createMarket(server)).market_id, (await createMarket(server)).market_id];
      await Promise.all(takers.map((taker) => credit(server, taker.address, 3_000_000)));
      await Promise.all(
        takers.flatMap((taker) =>
          [won, lost].map(async (market) => {
            const body = unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: 1_000_000 });
            const res = await client(server.baseUrl, taker.token).post('/v1/rfq/unsigned?wait_ms=3000', body);
            assert.equal(res.status, 201, JSON.stringify(res.body));
            assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
          }),
        ),
      );
      await Promise.all([resolveMarket(server, won, 'YES'), resolveMarket(server, lost, 'NO')]);
    }
    isLoading = false;
    await checking;

    assert.ok(checks.length >= 8, `${checks.length} checks taken during the traffic`);
    for (const check of checks) {
      assert.equal(check.ok, true, JSON.stringify(check));
      const conserved = BigInt(check.total_micros) + BigInt(check.in_transit_micros);
      assert.equal(conserved, BigInt(check.credited_micros) - BigInt(check.withdrawn_micros), JSON.stringify(check));
    }
    const inFlight = checks.filter((check) => check.in_transit_micros !== '0').length;
    t.diagnostic(`${checks.length} checks, ${inFlight} of them with money between the shards`);
    const last = (await admin(server).get<Check>('/v1/admin/ledger/check')).body;
    assert.equal(last.in_transit_micros, '0', 'once quiet, nothing is between the shards');
    for (const maker of makers) void maker.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('two shards: a difference that stays is still reported after the rechecks', async () => {
  const first = await startServer({ env: { PARLAYD_ENGINE: 'journal', PARLAYD_SHARDS: '2' } });
  const taker = await loginWallet(first);
  await credit(first, taker.address, 10_000_000);
  assert.equal(await first.stop(), 0);
  // A hold for no record, written straight into LMDB: what only a bug leaves (e2e/ledger-check.test.ts).
  const stray = rfqRef('00000000-0000-7000-8000-000000000000');
  const store = openStore(first.dataDir);
  await store.transact(() => {
    void store.db('holds').put(stray, { account: userAccount(taker.userId), bucket: 'reserved', amountMicros: '5' });
  });
  await store.close();
  const server = await restartServer(first);
  try {
    const check = (await admin(server).get<Check>('/v1/admin/ledger/check')).body;
    assert.equal(check.ok, false);
    assert.deepEqual((check.differences as Array<{ reason: string; ref?: string }>).map((d) => [d.reason, d.ref ?? null]).sort(), [
      ['hold_without_record', stray],
      ['holds', null],
    ]);
  } finally {
    await server.kill(); // a stop would run the same check on purpose-broken data
    removeDataDir(server);
  }
});
