// Issue 21, a full store: with a tiny LMDB map (PARLAYD_LMDB_MAP_SIZE_MB=2) credits fill it until new work
// gets 503 OVERLOADED with Retry-After. Then: the service is still up (the RFQ shard did not crash), an RFQ
// answered 503 does not exist and reserved nothing, a replayed credit still answers 200 without crediting
// twice, every balance is exactly its acknowledged credits, and the ledger audit of the stopped data dir
// finds no difference (nothing half written). Recovery without a restart: the room is a limit the service
// keeps (store/room.ts), so the operator raises it (PUT /v1/admin/storage) and every thread, the RFQ shard's
// included, takes new work again within its next read (50 ms); a restart with a larger map works too.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { openStore } from '../../src/store/db.js';
import { ROOM_CHECK_INTERVAL_MS } from '../../src/store/room.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { contestConfig, createContest, enter, getDetail, up } from '../helpers/contests.js';
import { client, type HttpResult } from '../helpers/http.js';
import { createMarket } from '../helpers/markets.js';
import { balanceOf, unsignedBody } from '../helpers/rfq.js';
import { assertLedgerAgrees, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { fundedUser, type TestUser } from '../helpers/users.js';

const CREDIT_MICROS = 1_000_000;
/** Bounds of the filling loop: 2 MiB fill in ~3,000 credits; past these the test fails, it never spins. */
const MAX_CREDITS = 20_000;
const MAX_FILL_MS = 60_000;
const BATCH = 100;

function creditBody(user: TestUser, key: string) {
  return { wallet: user.address, amount_micros: CREDIT_MICROS, idempotency_key: key };
}

async function fillUntilRefused(server: TestServer, people: TestUser[]): Promise<{ acked: Map<TestUser, string[]>; refused: HttpResult }> {
  const admin = client(server.baseUrl, server.adminToken);
  const acked = new Map<TestUser, string[]>(people.map((user) => [user, []]));
  const startMs = Date.now();
  for (let sent = 0; sent < MAX_CREDITS && Date.now() - startMs < MAX_FILL_MS; sent += BATCH) {
    const batch = Array.from({ length: BATCH }, (_, i) => ({ user: people[(sent + i) % people.length]!, key: randomUUID() }));
    const answers = await Promise.all(batch.map(({ user, key }) => admin.post('/v1/admin/users/credit', creditBody(user, key))));
    let refused: HttpResult | undefined;
    answers.forEach((answer, i) => {
      if (answer.status === 200) acked.get(batch[i]!.user)!.push(batch[i]!.key);
      else if (answer.status === 503) refused ??= answer;
      else assert.fail(`credit answered ${answer.status} ${JSON.stringify(answer.body)}`);
    });
    if (refused !== undefined) return { acked, refused };
  }
  return assert.fail('the store never refused a credit');
}

async function assertNoUser(dataDir: string, wallet: string): Promise<void> {
  const store = openStore(dataDir);
  try {
    assert.equal(store.db('usersByWallet').get(wallet.toLowerCase()), undefined, 'a refused credit made no user');
  } finally {
    await store.close();
  }
}

describe('a full store (issue 21)', () => {
  const servers: TestServer[] = [];
  // A failed assertion must not leave the child running: the test process would wait on its pipes.
  after(() => Promise.all(servers.map((s) => s.kill())));
  it('refuses new work with 503 and Retry-After, writes nothing half, stays up, works again once the room is raised live, and after a restart', async () => {
    const server = await startServer({ env: { PARLAYD_LMDB_MAP_SIZE_MB: '2' } });
    servers.push(server);
    const people = await Promise.all(Array.from({ length: 4 }, () => fundedUser(server, 10 * CREDIT_MICROS)));
    const market = (await createMarket(server)).market_id;
    const entryMarket = (await createMarket(server, 'full')).market_id as number;
    const contest = await createContest(server, contestConfig([entryMarket], { bet_amount_micros: CREDIT_MICROS, entry_cap: 100 }));
    const { acked, refused } = await fillUntilRefused(server, people);
    assert.deepEqual(refused.body, { code: 'OVERLOADED', message: 'service is overloaded, nothing was accepted' });
    assert.ok(Number(refused.headers.get('retry-after')) >= 1, 'a 503 carries Retry-After');

    // An RFQ now is refused by the shard, which stays up: nothing reserved, no RFQ in the taker's history.
    const taker = people[0]!;
    const rfq = await client(server.baseUrl, taker.token).post(
      '/v1/rfq/unsigned',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: CREDIT_MICROS }),
    );
    assert.equal(rfq.status, 503);
    assert.equal(rfq.body.code, 'OVERLOADED');
    assert.ok(rfq.headers.get('retry-after') !== null);
    assert.deepEqual((await client(server.baseUrl, taker.token).get('/v1/user/rfqs')).body.rfqs, []);
    // A contest entry too: refused before the shard's book counts its stake, and not counted.
    const entry = await enter(server, taker, contest.contest_id as string, [up(entryMarket)]);
    assert.equal(entry.status, 503);
    assert.equal(entry.body.code, 'OVERLOADED');
    assert.equal((await getDetail(server, contest.contest_id as string)).body.entries_filled, 0);
    // A credit to a wallet never seen is refused before its user is made: no user, no balance appears.
    const stranger = Wallet.createRandom().address;
    const strangerCredit = await client(server.baseUrl, server.adminToken).post('/v1/admin/users/credit', {
      wallet: stranger,
      amount_micros: CREDIT_MICROS,
      idempotency_key: randomUUID(),
    });
    assert.equal(strangerCredit.status, 503);
    assert.equal((await client(server.baseUrl).get('/healthz')).status, 200);
    // A login is new work too (a used nonce, a session, a user for a new wallet), and anyone can make one with
    // a fresh wallet: refused before its nonce is spent, so the same signed message logs in once there is room.
    const newcomer = Wallet.createRandom();
    const challenge = await client(server.baseUrl).post('/v1/auth/wallet/challenge', { address: newcomer.address });
    assert.equal(challenge.status, 200, 'a challenge writes nothing');
    const signedLogin = { message: challenge.body.message, signature: await newcomer.signMessage(challenge.body.message) };
    const refusedLogin = await client(server.baseUrl).post('/v1/auth/wallet', signedLogin);
    assert.deepEqual([refusedLogin.status, refusedLogin.body.code], [503, 'OVERLOADED']);
    assert.ok(refusedLogin.headers.get('retry-after') !== null);

    // A replayed credit writes nothing: it still answers 200, and credits once.
    const firstKey = acked.get(taker)![0]!;
    const replay = await client(server.baseUrl, server.adminToken).post('/v1/admin/users/credit', creditBody(taker, firstKey));
    assert.equal(replay.status, 200);
    for (const user of people) {
      const expected = BigInt(10 * CREDIT_MICROS + acked.get(user)!.length * CREDIT_MICROS);
      assert.deepEqual(
        await balanceOf(server, user),
        { available: expected, reserved: 0n, atRisk: 0n },
        'each balance is its acknowledged credits',
      );
    }
    assert.equal(server.process.exitCode, null, 'the service is still running');

    // Recovery without a restart: the operator reads the room, raises the limit, and new work is taken.
    const admin = client(server.baseUrl, server.adminToken);
    const full = await admin.get('/v1/admin/storage');
    assert.equal(full.status, 200);
    assert.equal(full.body.is_refusing, true);
    assert.ok(full.body.used_bytes >= full.body.room_bytes, JSON.stringify(full.body));
    const raised = await admin.put('/v1/admin/storage', { map_size_mb: 64 });
    assert.equal(raised.status, 200, JSON.stringify(raised.body));
    assert.equal(raised.body.map_size_mb, 64);
    assert.equal(raised.body.is_refusing, false);
    await sleep(2 * ROOM_CHECK_INTERVAL_MS); // the shard's last read of the room may be that old
    const liveKey = randomUUID();
    const live = await admin.post('/v1/admin/users/credit', creditBody(taker, liveKey));
    assert.equal(live.status, 200, JSON.stringify(live.body));
    acked.get(taker)!.push(liveKey);
    const liveRfq = await client(server.baseUrl, taker.token).post(
      '/v1/rfq/unsigned',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: CREDIT_MICROS }),
    );
    assert.equal(liveRfq.status, 201, JSON.stringify(liveRfq.body));
    const liveEntry = await enter(server, taker, contest.contest_id as string, [up(entryMarket)]);
    assert.equal(liveEntry.status, 201, JSON.stringify(liveEntry.body));
    const liveLogin = await client(server.baseUrl).post('/v1/auth/wallet', signedLogin);
    assert.deepEqual([liveLogin.status, liveLogin.body.wallet], [200, newcomer.address.toLowerCase()], JSON.stringify(liveLogin.body));
    assert.equal(server.process.exitCode, null);
    assert.equal(await server.stop(), 0);
    await assertLedgerAgrees(server.dataDir);
    await assertNoUser(server.dataDir, stranger);

    // Recovery: the same data with a larger map takes new work again.
    const restarted = await restartServer(server, { PARLAYD_LMDB_MAP_SIZE_MB: '64' });
    servers.push(restarted);
    const again = await client(restarted.baseUrl, restarted.adminToken).post('/v1/admin/users/credit', creditBody(taker, randomUUID()));
    assert.equal(again.status, 200);
    const after = await client(restarted.baseUrl, taker.token).post(
      '/v1/rfq/unsigned',
      unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: CREDIT_MICROS }),
    );
    assert.equal(after.status, 201, JSON.stringify(after.body));
    assert.equal(await restarted.stop(), 0);
    await assertLedgerAgrees(restarted.dataDir);
  });
});
