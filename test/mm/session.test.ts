// The maker bearer session (interface.md "Authentication" 3 and "Events", contract sections 2, 3 and 7): it
// lasts the configured session time (1 h by default; 1.5 s here; to the millisecond at the default in
// mm/timing.test, on a manual clock), ends with AUTH_EXPIRED and a close, and the same token then stops
// working on maker HTTP routes. Token kinds never cross: maker on a user route, user or admin on a maker
// route are 403 FORBIDDEN.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';
import { connectMaker, connectNewMaker, registerMaker } from '../helpers/makers.js';

const SESSION_TTL_MS = 1_500;
const forbidden = { code: 'FORBIDDEN', message: 'maker tokens may not use this route' };

describe('maker session', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ env: { PARLAYD_MM_SESSION_TTL_MS: String(SESSION_TTL_MS), PARLAYD_MM_HEARTBEAT_MS: '250' } });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('at session end the server sends AUTH_EXPIRED, closes 1008 AUTH_EXPIRED, the token is 401 on maker routes; a new connection gets a new one', async () => {
    const maker = await registerMaker(server);
    const mm = await connectMaker(server, maker);
    const api = client(server.baseUrl, mm.sessionToken);
    const live = await api.get('/v1/mm/session');
    assert.equal(live.status, 200);
    assert.deepEqual(live.body, { address: mm.address, expires_at_ms: mm.expiresAtMs });

    const expired = await mm.next('AUTH_EXPIRED', SESSION_TTL_MS + 5_000);
    assert.ok(Date.now() >= mm.expiresAtMs - 20, 'AUTH_EXPIRED came before the session end');
    assert.deepEqual(expired, { type: 'AUTH_EXPIRED', expired_at_ms: mm.expiresAtMs });
    assert.deepEqual(await mm.socket.waitClosed(), { code: 1008, reason: 'AUTH_EXPIRED' });
    const after = await api.get('/v1/mm/session');
    assert.equal(after.status, 401);
    assert.equal(after.body.code, 'UNAUTHENTICATED');
    // The heartbeat kept the socket alive until then: AUTH_EXPIRED is the reason it ended.
    assert.ok(mm.socket.received.filter((m) => m.type === 'heartbeat').length >= 3);

    const second = await connectMaker(server, maker);
    assert.notEqual(second.sessionToken, mm.sessionToken);
    assert.equal((await client(server.baseUrl, second.sessionToken).get('/v1/mm/session')).status, 200);
    await second.close();
  });
});

describe('maker token kinds', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('a maker token on a user route is 403 FORBIDDEN', async () => {
    const mm = await connectNewMaker(server);
    const res = await client(server.baseUrl, mm.sessionToken).get('/v1/user/balance');
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, forbidden);
    await mm.close();
  });

  it('a maker token on an admin route is 403 FORBIDDEN', async () => {
    const mm = await connectNewMaker(server);
    const res = await client(server.baseUrl, mm.sessionToken).get('/v1/admin/market-makers');
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, forbidden);
    await mm.close();
  });

  it('a user token and the admin token on a maker route are 403 FORBIDDEN', async () => {
    const user = await loginWallet(server);
    const asUser = await client(server.baseUrl, user.token).get('/v1/mm/session');
    assert.equal(asUser.status, 403);
    assert.deepEqual(asUser.body, { code: 'FORBIDDEN', message: 'user tokens may not use this route' });
    const asAdmin = await client(server.baseUrl, server.adminToken).get('/v1/mm/session');
    assert.equal(asAdmin.status, 403);
    assert.equal(asAdmin.body.code, 'FORBIDDEN');
  });

  it('no token or an unknown token on a maker route is 401 UNAUTHENTICATED', async () => {
    for (const token of [undefined, 'not-a-real-token']) {
      const res = await client(server.baseUrl, token).get('/v1/mm/session');
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'UNAUTHENTICATED');
    }
  });

  it('a maker session survives the socket: the token works after the maker disconnects', async () => {
    const mm = await connectNewMaker(server);
    await mm.close();
    assert.equal((await client(server.baseUrl, mm.sessionToken).get('/v1/mm/session')).status, 200);
  });
});
