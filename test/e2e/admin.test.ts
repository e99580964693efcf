// Who may call what (contract sections 2 and 3): a missing, unknown or malformed bearer is 401
// UNAUTHENTICATED; a valid token of the wrong kind is 403 FORBIDDEN. Admin routes take only the configured
// admin token, and refuse before they read the body, so a refused call changes nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { client, request } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet, type TestUser } from '../helpers/users.js';

const UNAUTHENTICATED = { code: 'UNAUTHENTICATED', message: 'missing, unknown, expired or revoked bearer token' };
const forbidden = (kind: string) => ({ code: 'FORBIDDEN', message: `${kind} tokens may not use this route` });

/** The foundation's routes that need a user session. */
const USER_ROUTES: ReadonlyArray<{ method: string; path: string; body?: unknown }> = [
  { method: 'GET', path: '/v1/user/balance' },
  { method: 'GET', path: '/v1/user/preferences' },
  { method: 'PATCH', path: '/v1/user/preferences', body: { quote_tolerance: 'strict' } },
  { method: 'POST', path: '/v1/auth/logout' },
];

describe('admin routes and auth modes', () => {
  let server: TestServer;
  let user: TestUser;
  let adminRoutes: Array<{ method: string; path: string; body: unknown }>;

  before(async () => {
    server = await startServer();
    user = await loginWallet(server);
    // Every admin operation the service documents, so admin routes added later are covered too.
    const openapi = await client(server.baseUrl).get('/v1/openapi.json');
    assert.equal(openapi.status, 200);
    adminRoutes = [];
    for (const [path, operations] of Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)) {
      if (!path.startsWith('/v1/admin/')) continue;
      for (const method of Object.keys(operations)) {
        const upper = method.toUpperCase();
        adminRoutes.push({ method: upper, path: path.replace(/\{[^}]+\}/g, '1'), body: upper === 'GET' ? undefined : {} });
      }
    }
    // The foundation's admin routes, with bodies that would succeed with the admin token.
    const credit = adminRoutes.find((r) => r.path === '/v1/admin/users/credit');
    const mention = adminRoutes.find((r) => r.path === '/v1/admin/mention-markets' && r.method === 'POST');
    const resolve = adminRoutes.find((r) => r.path === '/v1/admin/markets/1/resolve');
    assert.ok(credit && mention && resolve, 'the openapi document lists the admin routes');
    credit.body = { wallet: user.address, amount_micros: 1_000_000, idempotency_key: randomUUID() };
    mention.body = {
      name: 'refused',
      source_kind: 'x',
      source_event_id: 'e',
      source_market_id: 'm',
      betting_closes_at_ms: Date.now() + 60_000,
    };
    resolve.body = { outcome: 'YES' };
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  async function call(method: string, path: string, body: unknown, headers: Record<string, string>) {
    const res = await request(server.baseUrl, method, path, {
      headers,
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, body: res.body };
  }

  it('admin routes without a token are 401 UNAUTHENTICATED', async () => {
    for (const route of adminRoutes) {
      assert.deepEqual(
        await call(route.method, route.path, route.body, {}),
        { status: 401, body: UNAUTHENTICATED },
        `${route.method} ${route.path}`,
      );
    }
  });

  it('admin routes with an unknown, malformed or non-Bearer credential are 401 UNAUTHENTICATED', async () => {
    const nearMiss = server.adminToken.slice(0, -1) + (server.adminToken.endsWith('A') ? 'B' : 'A');
    const credentials = [
      `Bearer ${nearMiss}`,
      `Bearer ${server.adminToken}x`,
      'Bearer not-a-token',
      'Bearer ',
      `Basic ${Buffer.from(`admin:${server.adminToken}`).toString('base64')}`,
      server.adminToken,
      `Bearer ${server.adminToken} extra`,
    ];
    for (const route of adminRoutes) {
      for (const authorization of credentials) {
        assert.deepEqual(
          await call(route.method, route.path, route.body, { authorization }),
          { status: 401, body: UNAUTHENTICATED },
          `${route.method} ${route.path} with ${authorization.slice(0, 12)}…`,
        );
      }
    }
  });

  it('admin routes with a user session are 403 FORBIDDEN', async () => {
    for (const route of adminRoutes) {
      assert.deepEqual(
        await call(route.method, route.path, route.body, { authorization: `Bearer ${user.token}` }),
        { status: 403, body: forbidden('user') },
        `${route.method} ${route.path}`,
      );
    }
  });

  it('refused admin calls change nothing', async () => {
    const balance = await client(server.baseUrl, user.token).get('/v1/user/balance');
    assert.deepEqual(balance.body, { available_micros: '0', reserved_micros: '0', at_risk_micros: '0', pending_withdrawal_micros: '0' });
    const mentions = await client(server.baseUrl).get('/v1/mention-markets');
    assert.deepEqual(mentions.body, { markets: [], next_cursor: null });
  });

  it('an admin route refuses a bad token before it reads the body', async () => {
    const res = await call('POST', '/v1/admin/users/credit', undefined, { authorization: 'Bearer nope', 'content-type': 'text/plain' });
    assert.deepEqual(res, { status: 401, body: UNAUTHENTICATED });
  });

  it('user routes without a token, or with an unknown one, are 401 UNAUTHENTICATED', async () => {
    for (const route of USER_ROUTES) {
      for (const headers of [{}, { authorization: 'Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, { authorization: 'Bearer' }]) {
        assert.deepEqual(
          await call(route.method, route.path, route.body, headers),
          { status: 401, body: UNAUTHENTICATED },
          `${route.method} ${route.path}`,
        );
      }
    }
  });

  it('user routes with the admin token are 403 FORBIDDEN', async () => {
    for (const route of USER_ROUTES) {
      assert.deepEqual(
        await call(route.method, route.path, route.body, { authorization: `Bearer ${server.adminToken}` }),
        { status: 403, body: forbidden('admin') },
        `${route.method} ${route.path}`,
      );
    }
  });

  it('public routes ignore the Authorization header', async () => {
    const res = await call('GET', '/v1/markets/current?asset=BTC&duration_secs=300', undefined, { authorization: 'Bearer garbage' });
    assert.equal(res.status, 200);
  });

  it('the admin token works on admin routes', async () => {
    const admin = client(server.baseUrl, server.adminToken);
    const res = await admin.post('/v1/admin/users/credit', {
      wallet: user.address,
      amount_micros: 2_500_000,
      idempotency_key: randomUUID(),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.balance, {
      available_micros: '2500000',
      reserved_micros: '0',
      at_risk_micros: '0',
      pending_withdrawal_micros: '0',
    });
  });
});
