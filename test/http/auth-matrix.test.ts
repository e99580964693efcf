// Every route against every kind of bearer (contract sections 2 and 3), generated from the route table the
// server serves (its OpenAPI document, built from the same route objects the router holds, with each
// route's auth mode in `x-auth`): a new route is in the matrix the moment it is registered.
//
//   bearer:        none   malformed  expired  revoked  user   maker  admin
//   none           ok     ok         ok       ok       ok     ok     ok      (the bearer is not read)
//   optional-user  ok     401        401      401      ok     403    403
//   user           401    401        401      401      ok     403    403
//   maker          401    401        401      401      403    ok     403
//   admin          401    401        401      401      403    403    ok
//
// "ok" is any answer that is not about auth: 2xx, or a 4xx with another code (validation, 404, 415...).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { hashToken } from '../../src/auth/sessions.js';
import { openStore } from '../../src/store/db.js';
import { client, request } from '../helpers/http.js';
import { connectMaker, registerMaker } from '../helpers/makers.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';

type Bearer = 'none' | 'malformed' | 'expired' | 'revoked' | 'user' | 'maker' | 'admin';
type AuthMode = 'none' | 'optional-user' | 'user' | 'maker' | 'admin';
const BEARERS: readonly Bearer[] = ['none', 'malformed', 'expired', 'revoked', 'user', 'maker', 'admin'];
const AUTH_MODES: readonly AuthMode[] = ['none', 'optional-user', 'user', 'maker', 'admin'];

/** The contract's answer: 'ok' (not an auth refusal), or the refusal's status and code. */
function expected(mode: AuthMode, bearer: Bearer): 'ok' | 401 | 403 {
  if (mode === 'none') return 'ok';
  if (bearer === 'none') return mode === 'optional-user' ? 'ok' : 401;
  if (bearer === 'malformed' || bearer === 'expired' || bearer === 'revoked') return 401;
  const wanted = mode === 'optional-user' ? 'user' : mode;
  return bearer === wanted ? 'ok' : 403;
}

interface Operation {
  method: string;
  path: string;
  auth: AuthMode;
}

describe('auth matrix: every route x every kind of bearer', () => {
  let server: TestServer;
  let operations: Operation[];
  const tokens = new Map<Bearer, string>();

  before(async () => {
    server = await startServer();
    const maker = await registerMaker(server);
    const connected = await connectMaker(server, maker);
    tokens.set('maker', connected.sessionToken);
    await connected.socket.close();
    const revoked = await loginWallet(server);
    assert.equal((await client(server.baseUrl, revoked.token).post('/v1/auth/logout')).status, 200);
    tokens.set('revoked', revoked.token);
    tokens.set('admin', server.adminToken);
    tokens.set('malformed', 'not a token!');
    // An expired user session, written as the service writes one, while it is stopped (so no cache holds it).
    assert.equal(await server.stop(), 0);
    const expired = `expired-${randomUUID()}`;
    const store = openStore(server.dataDir);
    try {
      await store.db('sessions').put(hashToken(expired), {
        kind: 'user',
        userId: randomUUID(),
        wallet: Wallet.createRandom().address.toLowerCase(),
        createdAtMs: 1,
        expiresAtMs: Date.now() - 1_000,
      });
    } finally {
      await store.close();
    }
    tokens.set('expired', expired);
    server = await restartServer(server);
    const doc = (await client(server.baseUrl).get('/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { 'x-auth': AuthMode }>>;
    };
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, auth: op['x-auth'] })),
    );
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('every route states its auth mode, and the table holds each mode', () => {
    assert.ok(operations.length >= 20, `${operations.length} operations`);
    for (const op of operations) assert.ok(AUTH_MODES.includes(op.auth), `${op.method} ${op.path}: x-auth ${op.auth}`);
    for (const mode of AUTH_MODES)
      assert.ok(
        operations.some((op) => op.auth === mode),
        `no route with auth ${mode}`,
      );
  });

  it('each route answers each bearer as the contract says', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      // Path parameters: a well-formed value of the commonest kind; the answer may be 400 or 404 but is
      // decided after auth, which is all this test looks at.
      const path = op.path.replace('{address}', Wallet.createRandom().address.toLowerCase()).replace(/\{[a-z_]+\}/g, randomUUID());
      for (const bearer of BEARERS) {
        // A user token of its own each time: the logout route revokes the one it is given.
        const token = bearer === 'none' ? undefined : bearer === 'user' ? (await loginWallet(server)).token : tokens.get(bearer)!;
        const res = await request(server.baseUrl, op.method, path, token === undefined ? {} : { token });
        const want = expected(op.auth, bearer);
        const code = (res.body as { code?: string } | undefined)?.code;
        const isAuthRefusal = code === 'UNAUTHENTICATED' || code === 'FORBIDDEN';
        const isRight =
          want === 'ok'
            ? !isAuthRefusal && res.status < 500
            : res.status === want && code === (want === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN');
        if (!isRight) failures.push(`${op.method} ${op.path} (${op.auth}) with ${bearer}: ${res.status} ${code ?? ''}, want ${want}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
