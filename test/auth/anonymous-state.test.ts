// Durable state that anonymous calls can add (issue 21 item 4). A wallet challenge writes nothing (the nonce
// is a MAC, auth/login-nonce.ts); what is kept is the record of a used nonce until it expires, at most a
// bound of them, past which a login is 503 OVERLOADED with nothing spent. The auth routes have their own,
// tighter, per-IP limit. Removing a maker reads its own sessions only, not every session.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { Sessions } from '../../src/auth/sessions.js';
import { WalletLogin } from '../../src/auth/wallet-login.js';
import { VerifyPool } from '../../src/crypto/verify-pool.js';
import { openStore, type Store } from '../../src/store/db.js';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';

const SIWE = {
  siwe: { domain: 'localhost', uri: 'http://localhost', chainId: 1 },
  loginNonceTtlMs: 300_000,
  loginNoncesPerIp: 128,
  loginNoncesPerNetwork: 2_048,
};

function testClock(startMs = 1_700_000_000_000) {
  let nowMs = startMs;
  return { nowMs: () => nowMs, advance: (byMs: number) => void (nowMs += byMs) };
}

/** A request to `server` from the local address `from` (the limits are per IP and per network): GET for /healthz, else a JSON POST. */
function postFrom(
  server: TestServer,
  from: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: any; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: path === '/healthz' ? 'GET' : 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let answer = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(answer), retryAfter: res.headers['retry-after'] as string | undefined }),
        );
      },
    );
    req.on('error', reject).end(path === '/healthz' ? undefined : text);
  });
}

describe('in process on a real store', () => {
  let dataDir: string;
  let store: Store;
  let pool: VerifyPool;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'parlayd-anon-'));
    store = openStore(dataDir);
    pool = new VerifyPool({ threads: 1 });
  });
  after(async () => {
    await pool.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('10,000 challenges write nothing; a nonce from another data directory or edited by hand is unknown', async () => {
    const login = new WalletLogin(store, testClock(), SIWE, pool);
    login.stopSweeping();
    const before = store.db('loginNonces').getCount();
    const wallet = Wallet.createRandom();
    let last = login.challenge(wallet.address);
    for (let i = 0; i < 10_000; i++) last = login.challenge(wallet.address);
    assert.equal(store.db('loginNonces').getCount(), before);

    const otherDir = mkdtempSync(join(tmpdir(), 'parlayd-anon-other-'));
    const otherStore = openStore(otherDir);
    try {
      const foreign = new WalletLogin(otherStore, testClock(), SIWE, pool);
      foreign.stopSweeping();
      const theirs = foreign.challenge(wallet.address);
      await assert.rejects(login.verify(theirs.message, await wallet.signMessage(theirs.message)), {
        code: 'UNAUTHENTICATED',
        message: 'unknown or already used nonce',
      });
    } finally {
      await otherStore.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
    // One hex digit of the expiry changed (a later expiry): the MAC no longer matches.
    const edited = last.message.replace(
      `Nonce: ${last.nonce}`,
      `Nonce: ${(parseInt(last.nonce[0]!, 16) ^ 1).toString(16)}${last.nonce.slice(1)}`,
    );
    await assert.rejects(login.verify(edited, await wallet.signMessage(edited)), {
      code: 'UNAUTHENTICATED',
      message: 'unknown or already used nonce',
    });
    // The untouched one still logs in, once.
    assert.equal(await login.verify(last.message, await wallet.signMessage(last.message)), wallet.address.toLowerCase());
    await assert.rejects(login.verify(last.message, await wallet.signMessage(last.message)), {
      code: 'UNAUTHENTICATED',
      message: 'unknown or already used nonce',
    });
  });

  it('past the bound of used nonces a login is 503 OVERLOADED and spends nothing; once they expire, logins work again', async () => {
    const clock = testClock();
    const held = store.db('loginNonces').getCount();
    const login = new WalletLogin(store, clock, SIWE, pool, {}, held + 3);
    login.stopSweeping();
    for (let i = 0; i < 3; i++) {
      await assert.rejects(login.verify(login.challenge(Wallet.createRandom().address).message, '0x00'), { code: 'INVALID_SIGNATURE' });
    }
    assert.equal(store.db('loginNonces').getCount(), held + 3);
    const wallet = Wallet.createRandom();
    const { message } = login.challenge(wallet.address);
    const signature = await wallet.signMessage(message);
    await assert.rejects(login.verify(message, signature), { code: 'OVERLOADED' });
    await assert.rejects(login.verify(message, '0x00'), { code: 'OVERLOADED' });
    assert.equal(store.db('loginNonces').getCount(), held + 3, 'nothing recorded past the bound');
    clock.advance(SIWE.loginNonceTtlMs + 1);
    let removed = 0;
    for (let pass = 0; pass < 10 && removed < 3; pass++) removed += (await login.sweepExpiredBatch()).removed;
    assert.ok(removed >= 3);
    const fresh = login.challenge(wallet.address);
    assert.equal(await login.verify(fresh.message, await wallet.signMessage(fresh.message)), wallet.address.toLowerCase());
  });

  it('two logins with one message that pass the checks just before the nonce expires: only the first wins', async () => {
    const clock = testClock();
    const login = new WalletLogin(store, clock, SIWE, pool);
    login.stopSweeping();
    const wallet = Wallet.createRandom();
    const { message } = login.challenge(wallet.address);
    const signature = await wallet.signMessage(message);
    clock.advance(SIWE.loginNonceTtlMs - 1);
    // Both pass every check now and wait for their recoveries; the nonce expires meanwhile.
    const attempts = [login.verify(message, signature), login.verify(message, signature)];
    clock.advance(2);
    const outcomes = await Promise.allSettled(attempts);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    assert.equal((refused.reason as { message: string }).message, 'unknown or already used nonce');
  });

  it("revoking a maker reads its own sessions' index entries, never the whole sessions table", async () => {
    const sessions = new Sessions(store, testClock(), 'anonymous-state-test-admin-token');
    sessions.stopSweeping();
    const gone = '0x' + 'a'.repeat(40);
    const kept = '0x' + 'b'.repeat(40);
    const goneSessions = await Promise.all([1, 2, 3].map(() => sessions.issueMaker(gone, 3_600_000)));
    const keptSession = await sessions.issueMaker(kept, 3_600_000);
    await Promise.all(Array.from({ length: 500 }, (_, i) => sessions.issueUser(`user-${i}`, '0x' + 'c'.repeat(40), 3_600_000)));
    for (const s of goneSessions) assert.equal(sessions.resolve(s.token)?.kind, 'maker');

    const db = store.db('sessions') as unknown as { getRange: (options?: unknown) => Iterable<unknown> };
    const getRange = db.getRange.bind(db);
    let sessionRowsRead = 0;
    db.getRange = (options) =>
      (function* () {
        for (const row of getRange(options)) {
          sessionRowsRead++;
          yield row;
        }
      })();
    try {
      await sessions.revokeMaker(gone);
    } finally {
      db.getRange = getRange;
    }
    assert.equal(sessionRowsRead, 0, `revokeMaker read ${sessionRowsRead} session records`);
    for (const s of goneSessions) assert.equal(sessions.resolve(s.token), null);
    assert.equal(store.db('sessions').get(goneSessions[0]!.sessionKey), undefined, 'gone from LMDB too');
    assert.equal(sessions.resolve(keptSession.token)?.kind, 'maker');
  });

  it('maker sessions written before the index existed are indexed once at start', async () => {
    // A maker session as the code before the index wrote it: the session record alone.
    const address = '0x' + 'd'.repeat(40);
    await store.transact(() => {
      void store.db('sessions').put('f'.repeat(64), { kind: 'maker', address, createdAtMs: 1, expiresAtMs: 1_700_003_600_000 });
      void store.db('meta').remove('migration:maker-session-index:v1');
    });
    const sessions = new Sessions(store, testClock(), 'anonymous-state-test-admin-token');
    sessions.stopSweeping();
    await sessions.revokeMaker(address);
    assert.equal(store.db('sessions').get('f'.repeat(64)), undefined);
  });
});

describe('the auth routes have their own per-IP limit', () => {
  let server: TestServer;
  const BURST = 5;
  before(async () => {
    server = await startServer({ env: { PARLAYD_AUTH_RATE_LIMIT_PER_S: '1', PARLAYD_AUTH_RATE_LIMIT_BURST: String(BURST) } });
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    removeDataDir(server);
  });

  it('the burst of challenges from one IP, then 429 RATE_LIMITED with Retry-After; other routes and other IPs unaffected', async () => {
    const from = '127.0.0.21';
    const address = Wallet.createRandom().address;
    const answers = [];
    for (let i = 0; i < BURST + 2; i++) answers.push(await postFrom(server, from, '/v1/auth/wallet/challenge', { address }));
    assert.deepEqual(
      answers.slice(0, BURST).map((a) => a.status),
      Array(BURST).fill(200),
    );
    const limited = answers.at(-1)!;
    assert.deepEqual(
      { status: limited.status, body: limited.body },
      { status: 429, body: { code: 'RATE_LIMITED', message: 'rate limit exceeded' } },
    );
    assert.ok(Number(limited.retryAfter) >= 1);
    // Logins share the bucket: a login is an auth route too.
    assert.equal((await postFrom(server, from, '/v1/auth/wallet', { message: 'x', signature: '0x00' })).status, 429);
    assert.equal((await postFrom(server, from, '/healthz', null)).status, 200, 'the general limit is its own');
    assert.equal((await postFrom(server, '127.0.0.22', '/v1/auth/wallet/challenge', { address })).status, 200);
    // A login from a fresh IP works end to end.
    const user = await loginWallet(server);
    assert.equal((await client(server.baseUrl, user.token).get('/v1/user/balance')).status, 200);
  });
});

describe('the auth routes are limited per network too, and so are the login nonces a caller may hold', () => {
  let server: TestServer;
  const IP_BURST = 10;
  const NETWORK_BURST = 12;
  const NONCES_PER_IP = 2;
  const NONCES_PER_NETWORK = 3;
  before(async () => {
    server = await startServer({
      env: {
        PARLAYD_AUTH_RATE_LIMIT_PER_S: '1',
        PARLAYD_AUTH_RATE_LIMIT_BURST: String(IP_BURST),
        PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_PER_S: '1',
        PARLAYD_AUTH_RATE_LIMIT_PER_NETWORK_BURST: String(NETWORK_BURST),
        PARLAYD_LOGIN_NONCES_PER_IP: String(NONCES_PER_IP),
        PARLAYD_LOGIN_NONCES_PER_NETWORK: String(NONCES_PER_NETWORK),
      },
    });
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    removeDataDir(server);
  });

  const RATE_LIMITED = { code: 'RATE_LIMITED', message: 'rate limit exceeded' };

  it('past the burst of one /24, an IP of it with a full bucket of its own is 429 RATE_LIMITED; another /24 is not', async () => {
    const address = Wallet.createRandom().address;
    const statuses: number[] = [];
    // Three addresses, each well within its own burst, spend the network's.
    for (let i = 0; i < NETWORK_BURST; i++)
      statuses.push((await postFrom(server, `127.0.30.${(i % 3) + 1}`, '/v1/auth/wallet/challenge', { address })).status);
    assert.deepEqual(statuses, Array(NETWORK_BURST).fill(200));
    const limited = await postFrom(server, '127.0.30.4', '/v1/auth/wallet/challenge', { address });
    assert.deepEqual({ status: limited.status, body: limited.body }, { status: 429, body: RATE_LIMITED });
    assert.ok(Number(limited.retryAfter) >= 1);
    assert.equal((await postFrom(server, '127.0.33.1', '/v1/auth/wallet/challenge', { address })).status, 200);
  });

  it('past PARLAYD_LOGIN_NONCES_PER_IP and _PER_NETWORK a login is 429 and spends nothing: the same message logs in from elsewhere', async () => {
    const challenge = async (from: string, address: string) =>
      (await postFrom(server, from, '/v1/auth/wallet/challenge', { address })).body.message as string;
    // Two bad logins spend two nonces of 127.0.31.1 (a malformed signature spends its nonce: contract section 3).
    for (let i = 0; i < NONCES_PER_IP; i++) {
      const spent = await postFrom(server, '127.0.31.1', '/v1/auth/wallet', {
        message: await challenge('127.0.31.1', Wallet.createRandom().address),
        signature: '0x00',
      });
      assert.equal(spent.status, 400, JSON.stringify(spent.body));
    }
    const wallet = Wallet.createRandom();
    const message = await challenge('127.0.31.1', wallet.address);
    const login = { message, signature: await wallet.signMessage(message) };
    const refused = await postFrom(server, '127.0.31.1', '/v1/auth/wallet', login);
    assert.deepEqual({ status: refused.status, body: refused.body }, { status: 429, body: RATE_LIMITED });
    // Until the first of its nonces expires (the nonce lifetime, 5 min).
    assert.ok(Number(refused.retryAfter) > 200 && Number(refused.retryAfter) <= 300, `Retry-After ${refused.retryAfter}`);
    // Nothing was spent: the same signed message logs in from another address of the /24, the network's third.
    const elsewhere = await postFrom(server, '127.0.31.2', '/v1/auth/wallet', login);
    assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    assert.equal(elsewhere.body.wallet, wallet.address.toLowerCase());
    // The network's share is held now: a third address of it is refused, one of another /24 is not.
    const other = Wallet.createRandom();
    const otherMessage = await challenge('127.0.31.3', other.address);
    const otherLogin = { message: otherMessage, signature: await other.signMessage(otherMessage) };
    const networkFull = await postFrom(server, '127.0.31.3', '/v1/auth/wallet', otherLogin);
    assert.deepEqual({ status: networkFull.status, body: networkFull.body }, { status: 429, body: RATE_LIMITED });
    assert.equal((await postFrom(server, '127.0.32.1', '/v1/auth/wallet', otherLogin)).status, 200);
  });
});
