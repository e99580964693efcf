// The maker registry (contract section 7): admin add, list and remove by address; removal closes the maker's
// live sockets and ends its sessions; the registry is durable across a restart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { client } from '../helpers/http.js';
import { openStore } from '../../src/store/db.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { breakChecksum, fundedUser, loginWallet } from '../helpers/users.js';
import { createMarket } from '../helpers/markets.js';
import { unsignedBody } from '../helpers/rfq.js';
import { waitFor } from '../helpers/wait.js';
import { MakerSocket, connectMaker, domainTagOf, registerMaker, signChallenge } from '../helpers/makers.js';

const VECTOR_KEY = '0x1111111111111111111111111111111111111111111111111111111111111111';

describe('maker registry', () => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;

  before(async () => {
    server = await startServer();
    admin = client(server.baseUrl, server.adminToken);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('POST registers a maker (201) with its lowercase address; POST again renames it (200), keeping created_at_ms', async () => {
    const wallet = Wallet.createRandom();
    const beforeMs = Date.now();
    const created = await admin.post('/v1/admin/market-makers', { address: wallet.address, name: 'Alpha MM' });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body, {
      address: wallet.address.toLowerCase(),
      name: 'Alpha MM',
      created_at_ms: created.body.created_at_ms,
      connections: 0,
    });
    assert.ok(created.body.created_at_ms >= beforeMs && created.body.created_at_ms <= Date.now());
    const renamed = await admin.post('/v1/admin/market-makers', { address: wallet.address.toLowerCase().slice(2), name: 'Alpha Two' });
    assert.equal(renamed.status, 200);
    assert.deepEqual(renamed.body, { ...created.body, name: 'Alpha Two' });
  });

  it('GET lists registered makers with their live connection counts', async () => {
    const maker = await registerMaker(server, Wallet.createRandom(), 'Listed');
    const mm = await connectMaker(server, maker);
    const list = await admin.get('/v1/admin/market-makers');
    assert.equal(list.status, 200);
    const entry = list.body.makers.find((m: { address: string }) => m.address === maker.address);
    assert.deepEqual(entry, { address: maker.address, name: 'Listed', created_at_ms: entry.created_at_ms, connections: 1 });
    await mm.close();
  });

  it('bad input is 400 VALIDATION_FAILED: a bad EIP-55 checksum, an unknown field, a missing or empty name', async () => {
    const address = new Wallet(VECTOR_KEY).address;
    for (const body of [
      { address: breakChecksum(address), name: 'x' },
      { address, name: 'x', extra: 1 },
      { address },
      { address, name: '' },
      { address: '0x1234', name: 'x' },
    ]) {
      const res = await admin.post('/v1/admin/market-makers', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'VALIDATION_FAILED');
    }
  });

  it('DELETE of an unknown maker is 404 MAKER_NOT_FOUND; of a bad address 400', async () => {
    const unknown = await admin.delete(`/v1/admin/market-makers/${Wallet.createRandom().address}`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { code: 'MAKER_NOT_FOUND', message: 'no such market maker' });
    const bad = await admin.delete(`/v1/admin/market-makers/${breakChecksum(new Wallet(VECTOR_KEY).address)}`);
    assert.equal(bad.status, 400);
  });

  it('the admin routes need the admin token: none is 401, a user token is 403', async () => {
    const user = await loginWallet(server);
    assert.equal((await client(server.baseUrl).get('/v1/admin/market-makers')).status, 401);
    const asUser = await client(server.baseUrl, user.token).post('/v1/admin/market-makers', { address: user.address, name: 'me' });
    assert.equal(asUser.status, 403);
    assert.equal(asUser.body.code, 'FORBIDDEN');
  });

  it('removing a maker closes its live sockets (error then close MAKER_REMOVED), revokes its tokens and refuses its next auth', async () => {
    const maker = await registerMaker(server);
    const bystander = await connectMaker(server, await registerMaker(server));
    const [a, b] = await Promise.all([connectMaker(server, maker), connectMaker(server, maker)]);
    // Each bearer is used once first, so its session is held in memory as well as in LMDB (auth/sessions.ts).
    for (const mm of [a, b]) assert.equal((await client(server.baseUrl, mm.sessionToken).get('/v1/mm/session')).status, 200);
    const removed = await admin.delete(`/v1/admin/market-makers/${maker.checksumAddress}`);
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body, { address: maker.address, removed: true, closed_connections: 2 });
    for (const mm of [a, b]) {
      assert.equal((await mm.next('error')).code, 'MAKER_REMOVED');
      assert.deepEqual(await mm.socket.waitClosed(), { code: 1008, reason: 'MAKER_REMOVED' });
      assert.equal((await client(server.baseUrl, mm.sessionToken).get('/v1/mm/session')).status, 401);
    }
    const socket = await MakerSocket.open(server);
    const challenge = await socket.next('auth_challenge');
    socket.send({
      type: 'auth_response',
      address: maker.checksumAddress,
      signature: await signChallenge(maker.wallet, challenge, domainTagOf(server)),
    });
    assert.deepEqual(await socket.next('auth_result'), { type: 'auth_result', success: false, reason: 'UNKNOWN_MAKER' });
    // Another maker is untouched.
    assert.equal(bystander.socket.isOpen, true);
    assert.equal((await client(server.baseUrl, bystander.sessionToken).get('/v1/mm/session')).status, 200);
    const list = await admin.get('/v1/admin/market-makers');
    assert.equal(
      list.body.makers.some((m: { address: string }) => m.address === maker.address),
      false,
    );
    assert.equal((await admin.delete(`/v1/admin/market-makers/${maker.address}`)).status, 404);
    await bystander.close();
  });

  it('a removed maker can be registered again and authenticate, its stats started afresh', async () => {
    const maker = await registerMaker(server);
    const before = await connectMaker(server, maker);
    const user = await fundedUser(server, 10_000_000);
    const market = (await createMarket(server)).market_id;
    const rfq = await client(server.baseUrl, user.token).post('/v1/rfq/unsigned', unsignedBody([{ market_id: market, direction: 'up' }]));
    assert.equal(rfq.status, 201, JSON.stringify(rfq.body));
    await before.next('rfq');
    const statsOf = async (token: string) => (await client(server.baseUrl, token).get(`/v1/mm/stats?since_ms=${Date.now() - 60_000}`)).body;
    await waitFor(async () => (await statsOf(before.sessionToken)).rfqs_received === 1, { what: 'the rfq counted' });
    assert.equal((await admin.delete(`/v1/admin/market-makers/${maker.address}`)).status, 200);
    await registerMaker(server, maker.wallet);
    const mm = await connectMaker(server, maker);
    assert.equal((await statsOf(mm.sessionToken)).rfqs_received, 0, 'the removed maker’s counts went with it');
    await mm.close();
    await before.close();
  });
});

describe('maker registry durability', () => {
  it('a removal cut short by a crash (registry gone, sessions left) is finished by the retry: 404, and its sessions end', async () => {
    const first = await startServer();
    const maker = await registerMaker(first, Wallet.createRandom(), 'Half removed');
    const mm = await connectMaker(first, maker);
    await mm.close();
    await first.kill();
    // The state a kill -9 leaves between the registry's delete and the sessions' revocation.
    const store = openStore(first.dataDir);
    await store.transact(() => void store.db('makers').remove(maker.address));
    await store.close();
    const second = await restartServer(first);
    try {
      const bearer = client(second.baseUrl, mm.sessionToken);
      assert.equal((await bearer.get('/v1/mm/session')).status, 200, 'the session outlived its maker');
      const retry = await client(second.baseUrl, second.adminToken).delete(`/v1/admin/market-makers/${maker.address}`);
      assert.deepEqual([retry.status, retry.body.code], [404, 'MAKER_NOT_FOUND']);
      assert.equal((await bearer.get('/v1/mm/session')).status, 401, 'the retry ended it');
    } finally {
      await second.stop();
      removeDataDir(second);
    }
  });

  it('registered makers survive a restart and authenticate on the new process', async () => {
    const first = await startServer();
    const maker = await registerMaker(first, Wallet.createRandom(), 'Durable');
    await first.kill();
    const second = await restartServer(first);
    try {
      const list = await client(second.baseUrl, second.adminToken).get('/v1/admin/market-makers');
      assert.deepEqual(
        list.body.makers.map((m: { address: string; name: string }) => [m.address, m.name]),
        [[maker.address, 'Durable']],
      );
      const mm = await connectMaker(second, maker);
      await mm.close();
    } finally {
      await second.stop();
      removeDataDir(second);
    }
  });
});
