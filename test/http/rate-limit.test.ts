// Contract section 2: per-user or per-IP limits answer 429 RATE_LIMITED with Retry-After, and change nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { loginWallet, type TestUser } from '../helpers/users.js';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

before(async () => {
  server = await startServer({ env: { PARLAYD_RATE_LIMIT_PER_S: '1', PARLAYD_RATE_LIMIT_BURST: '10' } });
  alice = await loginWallet(server); // each login spends 2 of this IP's 10 tokens
  bob = await loginWallet(server);
});

after(async () => {
  await server.stop();
});

test('a user past its burst gets 429 RATE_LIMITED with Retry-After; another user is unaffected', async () => {
  const statuses: number[] = [];
  let limited: { status: number; body: any; headers: Headers } | null = null;
  for (let i = 0; i < 12; i++) {
    const result = await client(server.baseUrl, alice.token).get('/v1/user/balance');
    statuses.push(result.status);
    if (result.status === 429) limited = result;
  }
  assert.deepEqual(statuses.slice(0, 10), Array(10).fill(200));
  assert.equal(statuses[11], 429);
  assert.deepEqual(limited!.body, { code: 'RATE_LIMITED', message: 'rate limit exceeded' });
  assert.ok(Number(limited!.headers.get('retry-after')) >= 1);
  assert.equal((await client(server.baseUrl, bob.token).get('/v1/user/balance')).status, 200);
});

test('anonymous callers are limited by IP; the admin token never is', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await client(server.baseUrl).get('/healthz')).status);
  assert.ok(statuses.includes(429), `the IP spent 4 tokens logging in, so 8 more must hit the limit: ${statuses}`);
  for (let i = 0; i < 15; i++) {
    assert.equal((await client(server.baseUrl, server.adminToken).get('/v1/admin/market-makers')).status, 200);
  }
});
