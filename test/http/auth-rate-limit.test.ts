// Contract section 2: callers that are not authenticated are limited per IP. A request whose bearer is
// refused (401, or 403 for a token of the wrong kind) is such a caller: it spends its IP's bucket, and once
// that is empty the answer is 429 RATE_LIMITED with Retry-After, so tokens (the admin's may be only 16
// characters) cannot be guessed at full speed. Each test sends from its own loopback address (127.0.0.x on
// Linux), so each starts with a full bucket of its own.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet, type TestUser } from '../helpers/users.js';

const BURST = 10;
const RATE_LIMITED = { code: 'RATE_LIMITED', message: 'rate limit exceeded' };
const UNAUTHENTICATED = { code: 'UNAUTHENTICATED', message: 'missing, unknown, expired or revoked bearer token' };

interface Answer {
  status: number;
  body: unknown;
  retryAfter: string | undefined;
}

/** GET `path` from the local address `from`, with `token` as bearer when given. */
function getFrom(server: TestServer, from: string, path: string, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const req = http.request({ host: '127.0.0.1', port: server.port, path, headers, localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode!, body: JSON.parse(text), retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
      });
    });
    req.on('error', reject).end();
  });
}

/** Sends `count` requests one after another and returns their answers in order. */
async function sequence(count: number, send: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i++) answers.push(await send());
  return answers;
}

function assertLimited(answer: Answer | undefined): void {
  assert.ok(answer !== undefined);
  assert.deepEqual({ status: answer.status, body: answer.body }, { status: 429, body: RATE_LIMITED });
  assert.ok(Number(answer.retryAfter) >= 1, `Retry-After ${answer.retryAfter}`);
}

describe('failed bearer attempts are rate limited per IP', () => {
  let server: TestServer;
  let user: TestUser;

  before(async () => {
    // 1 request/s refill: the few hundred ms a test takes add at most a token or two, which the
    // assertions below allow for.
    server = await startServer({ env: { PARLAYD_RATE_LIMIT_PER_S: '1', PARLAYD_RATE_LIMIT_BURST: String(BURST) } });
    user = await loginWallet(server); // from 127.0.0.1, whose bucket no test below uses
  });
  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
    removeDataDir(server);
  });

  it('unknown tokens get 401 until the IP burst is spent, then 429 RATE_LIMITED with Retry-After', async () => {
    const from = '127.0.0.2';
    const guess = 'g'.repeat(16); // as short as an admin token may be
    const answers = await sequence(BURST + 3, () => getFrom(server, from, '/v1/admin/market-makers', guess));
    for (const answer of answers.slice(0, BURST))
      assert.deepEqual({ status: answer.status, body: answer.body }, { status: 401, body: UNAUTHENTICATED });
    assertLimited(answers.at(-1));
    // The bucket is the IP's: an anonymous request from it is limited too, another IP is not.
    assertLimited(await getFrom(server, from, '/healthz'));
    assert.equal((await getFrom(server, '127.0.0.3', '/healthz')).status, 200);
  });

  it('an IP locked out by refused tokens gets 429 for any bearer, the right admin token included, until it refills', async () => {
    const from = '127.0.0.5';
    const answers = await sequence(BURST + 1, () => getFrom(server, from, '/v1/admin/market-makers', 'h'.repeat(16)));
    assertLimited(answers.at(-1));
    // Were the right token let through, a guesser past its limit would still learn which guess was right.
    const admin = await getFrom(server, from, '/v1/admin/market-makers', server.adminToken);
    assertLimited(admin);
    assertLimited(await getFrom(server, from, '/v1/user/balance', user.token));
    // Other addresses are unaffected, and the lockout ends once the bucket holds a token again.
    assert.equal((await getFrom(server, '127.0.0.6', '/v1/admin/market-makers', server.adminToken)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, Number(admin.retryAfter) * 1000 + 100));
    assert.equal((await getFrom(server, from, '/v1/admin/market-makers', server.adminToken)).status, 200);
  });

  it('a token of the wrong kind (403 FORBIDDEN) spends the IP bucket too', async () => {
    const from = '127.0.0.4';
    const answers = await sequence(BURST + 3, () => getFrom(server, from, '/v1/admin/market-makers', user.token));
    for (const answer of answers.slice(0, BURST)) assert.equal(answer.status, 403);
    assertLimited(answers.at(-1));
    // The user's own bucket was not spent by those refusals.
    assert.equal((await client(server.baseUrl, user.token).get('/v1/user/balance')).status, 200);
  });
});
