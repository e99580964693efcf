// Durability across restarts (contract sections 3-5, 9 and 10): after a graceful stop, and after a kill -9,
// a new process on the same LMDB directory knows the same users, sessions (a revoked one stays revoked),
// balances, credit idempotency keys, preferences and markets, and hands out no market id twice.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Market } from '../../src/contract/markets.js';
import { client } from '../helpers/http.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';

describe('restart keeps state', () => {
  let first: TestServer;
  let second: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let revokedToken: string;
  const creditKey = randomUUID();
  const boundaryMs = (Math.floor(Date.now() / 900_000) + 3) * 900_000;
  let priceBefore: Market;
  let priceAfter: Market;
  let mentions: Market[];
  let resolved: Market;

  before(async () => {
    first = await startServer();
    const api = client(first.baseUrl);
    const admin = client(first.baseUrl, first.adminToken);
    alice = await loginWallet(first);
    bob = await loginWallet(first);
    revokedToken = (await loginWallet(first, alice.wallet)).token;
    assert.equal((await client(first.baseUrl, revokedToken).post('/v1/auth/logout')).status, 200);

    await credit(first, alice.address, 12_000_000, creditKey);
    await credit(first, bob.address, 1_500_000);
    const patched = await client(first.baseUrl, alice.token).patch('/v1/user/preferences', {
      quote_tolerance: 'lenient',
      anonymous_mode_enabled: true,
    });
    assert.equal(patched.status, 200);

    priceBefore = (await api.get(`/v1/markets/lookup?asset=ETH&duration_secs=900&at_ms=${boundaryMs - 1}`)).body.market;
    priceAfter = (await api.get(`/v1/markets/lookup?asset=ETH&duration_secs=900&at_ms=${boundaryMs}`)).body.market;
    const mentionBody = (n: number) => ({
      name: `mention ${n}`,
      source_kind: 'polymarket',
      source_event_id: `e${n}`,
      source_market_id: `m${n}`,
      betting_closes_at_ms: Date.now() + 3_600_000,
    });
    const a = (await admin.post('/v1/admin/mention-markets', mentionBody(1))).body as Market;
    const b = (await admin.post('/v1/admin/mention-markets', mentionBody(2))).body as Market;
    resolved = (await admin.post(`/v1/admin/markets/${b.market_id}/resolve`, { outcome: 'NO' })).body as Market;
    mentions = [a, resolved];

    assert.equal(await first.stop(), 0, `graceful stop exits 0; stderr: ${first.stderr.join('\n')}`);
    second = await restartServer(first);
  });
  after(async () => {
    await second.stop();
    removeDataDir(second);
  });

  it('a session token issued before the restart still works', async () => {
    const res = await client(second.baseUrl, alice.token).get('/v1/user/balance');
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it('a session revoked before the restart stays revoked', async () => {
    const res = await client(second.baseUrl, revokedToken).get('/v1/user/balance');
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 401, body: { code: 'UNAUTHENTICATED', message: 'missing, unknown, expired or revoked bearer token' } },
    );
  });

  it('a wallet that logs in again after the restart is the same user', async () => {
    const again = await loginWallet(second, alice.wallet);
    assert.equal(again.userId, alice.userId);
  });

  it('balances survive the restart', async () => {
    const aliceBalance = await client(second.baseUrl, alice.token).get('/v1/user/balance');
    assert.deepEqual(aliceBalance.body, {
      available_micros: '12000000',
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: '0',
    });
    const bobBalance = await client(second.baseUrl, bob.token).get('/v1/user/balance');
    assert.deepEqual(bobBalance.body, {
      available_micros: '1500000',
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: '0',
    });
  });

  it('a credit idempotency key used before the restart still credits nothing twice and still conflicts', async () => {
    const admin = client(second.baseUrl, second.adminToken);
    const replay = await admin.post('/v1/admin/users/credit', {
      wallet: alice.address,
      amount_micros: 12_000_000,
      idempotency_key: creditKey,
    });
    assert.equal(replay.status, 200);
    assert.deepEqual(replay.body.balance, {
      available_micros: '12000000',
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: '0',
    });
    const conflict = await admin.post('/v1/admin/users/credit', { wallet: alice.address, amount_micros: 1, idempotency_key: creditKey });
    assert.deepEqual(
      { status: conflict.status, body: conflict.body },
      { status: 409, body: { code: 'IDEMPOTENCY_CONFLICT', message: 'idempotency key reused with different content' } },
    );
  });

  it('preferences survive the restart', async () => {
    const res = await client(second.baseUrl, alice.token).get('/v1/user/preferences');
    assert.deepEqual(res.body, { notifications_enabled: true, quote_tolerance: 'lenient', anonymous_mode_enabled: true });
    const bobs = await client(second.baseUrl, bob.token).get('/v1/user/preferences');
    assert.deepEqual(bobs.body, { notifications_enabled: true, quote_tolerance: 'normal', anonymous_mode_enabled: false });
  });

  it('price market windows keep their ids across the restart', async () => {
    const api = client(second.baseUrl);
    const before = await api.get(`/v1/markets/lookup?asset=ETH&duration_secs=900&at_ms=${boundaryMs - 900_000}`);
    const after = await api.get(`/v1/markets/lookup?asset=ETH&duration_secs=900&at_ms=${boundaryMs + 1}`);
    assert.deepEqual(before.body.market, priceBefore);
    assert.deepEqual(after.body.market, priceAfter);
    assert.notEqual(priceBefore.market_id, priceAfter.market_id);
  });

  it('mention markets and their resolutions survive, and resolution stays final', async () => {
    const api = client(second.baseUrl);
    assert.deepEqual((await api.get('/v1/mention-markets')).body, { markets: mentions, next_cursor: null });
    const admin = client(second.baseUrl, second.adminToken);
    const same = await admin.post(`/v1/admin/markets/${resolved.market_id}/resolve`, { outcome: 'NO' });
    assert.deepEqual({ status: same.status, body: same.body }, { status: 200, body: resolved });
    const other = await admin.post(`/v1/admin/markets/${resolved.market_id}/resolve`, { outcome: 'YES' });
    assert.equal(other.status, 409);
  });

  it('market ids created after the restart never reuse an earlier id', async () => {
    const admin = client(second.baseUrl, second.adminToken);
    const created = await admin.post('/v1/admin/mention-markets', {
      name: 'after restart',
      source_kind: 'x',
      source_event_id: 'e',
      source_market_id: 'm',
      betting_closes_at_ms: Date.now() + 60_000,
    });
    assert.equal(created.status, 201);
    const earlier = [priceBefore, priceAfter, ...mentions].map((m) => m.market_id);
    assert.ok(created.body.market_id > Math.max(...earlier), `${created.body.market_id} > ${Math.max(...earlier)}`);
  });
});

describe('crash (kill -9) keeps acknowledged writes', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('every answered login, credit, preference change and market survives a kill -9', async () => {
    const users = await Promise.all(Array.from({ length: 4 }, () => loginWallet(server)));
    await Promise.all(users.map((u, i) => credit(server, u.address, 1_000_000 * (i + 1))));
    const prefs = await client(server.baseUrl, users[0]!.token).patch('/v1/user/preferences', { notifications_enabled: false });
    assert.equal(prefs.status, 200);
    const market = await client(server.baseUrl, server.adminToken).post('/v1/admin/mention-markets', {
      name: 'crash',
      source_kind: 'x',
      source_event_id: 'e',
      source_market_id: 'm',
      betting_closes_at_ms: Date.now() + 60_000,
    });
    assert.equal(market.status, 201);

    await server.kill();
    server = await restartServer(server);

    for (const [i, user] of users.entries()) {
      const balance = await client(server.baseUrl, user.token).get('/v1/user/balance');
      assert.equal(balance.status, 200, JSON.stringify(balance.body));
      assert.equal(balance.body.available_micros, String(1_000_000 * (i + 1)));
    }
    const after = await client(server.baseUrl, users[0]!.token).get('/v1/user/preferences');
    assert.equal(after.body.notifications_enabled, false);
    assert.deepEqual((await client(server.baseUrl).get('/v1/mention-markets')).body, { markets: [market.body], next_cursor: null });
  });
});
