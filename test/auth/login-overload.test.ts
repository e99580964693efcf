// Wallet login when the signature-recovery pool is full (contract section 2: 503 OVERLOADED with Retry-After,
// "nothing was accepted"): the login's nonce is not spent, so the same signed message succeeds when retried.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';

// One recovery accepted at a time: of logins sent together, all but the first find the pool full.
const LOGINS = 24;

describe('wallet login with the verify pool full', () => {
  let server: TestServer;

  before(async () => {
    // Rate limits off: the burst must reach the pool, not the per-IP bucket.
    server = await startServer({ env: { PARLAYD_VERIFY_MAX_QUEUE: '1', PARLAYD_RATE_LIMIT_PER_S: '0' } });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('a login the pool cannot take is 503 OVERLOADED with Retry-After, and the same signed message then logs in', async () => {
    const api = client(server.baseUrl);
    const logins = await Promise.all(
      Array.from({ length: LOGINS }, async () => {
        const wallet = Wallet.createRandom();
        const challenge = await api.post('/v1/auth/wallet/challenge', { address: wallet.address });
        assert.equal(challenge.status, 200, JSON.stringify(challenge.body));
        const body = { message: challenge.body.message as string, signature: await wallet.signMessage(challenge.body.message) };
        return { wallet, body };
      }),
    );
    const answers = await Promise.all(logins.map(({ body }) => api.post('/v1/auth/wallet', body)));

    for (const answer of answers) {
      if (answer.status === 200) continue;
      assert.deepEqual(
        { status: answer.status, body: answer.body, retryAfter: answer.headers.get('retry-after') },
        { status: 503, body: { code: 'OVERLOADED', message: 'service is overloaded, nothing was accepted' }, retryAfter: '1' },
      );
    }
    const refused = logins.filter((_, i) => answers[i]!.status === 503);
    assert.ok(refused.length > 0, 'no login found the pool full: the test did not test overload');
    // One at a time the pool takes each: the nonce the 503 left unspent still logs in.
    for (const { wallet, body } of refused) {
      const retry = await api.post('/v1/auth/wallet', body);
      assert.equal(retry.status, 200, JSON.stringify(retry.body));
      assert.equal(retry.body.wallet, wallet.address.toLowerCase());
      // ...and is spent by that login.
      const replay = await api.post('/v1/auth/wallet', body);
      assert.deepEqual(
        { status: replay.status, body: replay.body },
        { status: 401, body: { code: 'UNAUTHENTICATED', message: 'unknown or already used nonce' } },
      );
    }
  });
});
