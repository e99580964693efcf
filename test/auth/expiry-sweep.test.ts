// The expiry sweep of used login nonces and sessions (auth/sessions.ts, ExpirySweep): a used nonce is kept
// until its expiry (so it stays single-use), and a session that is never logged out is never revoked, so
// without the sweep both would pile up for ever. (A challenge writes nothing: auth/login-nonce.ts.) Expired records are deleted at start and then periodically, in bounded
// batches; live ones, and the sessions cached in memory, are left alone.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { hashToken, Sessions } from '../../src/auth/sessions.js';
import { WalletLogin } from '../../src/auth/wallet-login.js';
import { VerifyPool } from '../../src/crypto/verify-pool.js';
import { openStore, type Store } from '../../src/store/db.js';
import { client } from '../helpers/http.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const ADMIN_TOKEN = 'expiry-sweep-test-admin-token-0123456789';
const HOUR_MS = 3_600_000;

/** A clock the test moves (the one fake STYLE allows: time is the edge of the world). */
function testClock(startMs = 1_700_000_000_000) {
  let nowMs = startMs;
  return {
    nowMs: () => nowMs,
    advance(byMs: number) {
      nowMs += byMs;
    },
  };
}

function keysOf(store: Store, name: 'sessions' | 'loginNonces'): string[] {
  return [...store.db(name).getKeys()] as string[];
}

describe('expiry sweep, in process on a real store', () => {
  let dataDir: string;
  let store: Store;

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'parlayd-sweep-'));
    store = openStore(dataDir);
  });
  after(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('deletes expired sessions only, and drops a swept session from the memory cache', async () => {
    const clock = testClock();
    const sessions = new Sessions(store, clock, ADMIN_TOKEN);
    sessions.stopSweeping(); // this test runs its batches itself
    const expiring = await sessions.issueUser('u-expiring', '0x' + '1'.repeat(40), 1_000);
    const live = await sessions.issueUser('u-live', '0x' + '2'.repeat(40), HOUR_MS);
    // Resolved once each, so both are held in memory as well as in LMDB.
    assert.equal(sessions.resolve(expiring.token)?.kind, 'user');
    assert.equal(sessions.resolve(live.token)?.kind, 'user');

    clock.advance(5_000);
    const result = await sessions.sweepExpiredBatch();
    assert.deepEqual(result, { examined: 2, removed: 1, isPassDone: true });
    assert.deepEqual(
      keysOf(store, 'sessions').filter((k) => k === expiring.sessionKey || k === live.sessionKey),
      [live.sessionKey],
    );
    assert.deepEqual(sessions.resolve(live.token), {
      kind: 'user',
      userId: 'u-live',
      wallet: '0x' + '2'.repeat(40),
      sessionKey: live.sessionKey,
    });
    // The wall clock steps back: a cache entry still held would answer (its expiry is ahead again); the
    // swept record is gone from LMDB, so only a dropped cache entry gives null.
    clock.advance(-5_000);
    assert.equal(sessions.resolve(expiring.token), null);
    assert.notEqual(sessions.resolve(live.token), null);
    await sessions.revoke(live.sessionKey);
  });

  it('a batch examines at most batchRecords records; the batches of a pass visit every record once', async () => {
    const clock = testClock();
    const sessions = new Sessions(store, clock, ADMIN_TOKEN, { batchRecords: 10 });
    sessions.stopSweeping();
    const existing = new Set(keysOf(store, 'sessions'));
    const issued = [];
    for (let i = 0; i < 30; i++) issued.push(await sessions.issueUser(`u${i}`, '0x' + '3'.repeat(40), i < 25 ? 1_000 : HOUR_MS));
    assert.equal(existing.size, 0, "the store holds only this test's sessions");

    clock.advance(2_000);
    const results = [];
    do results.push(await sessions.sweepExpiredBatch());
    while (!results.at(-1)!.isPassDone);
    assert.deepEqual(
      results.map((r) => r.examined),
      [10, 10, 10, 0],
    );
    assert.equal(
      results.reduce((sum, r) => sum + r.removed, 0),
      25,
    );
    assert.deepEqual(
      keysOf(store, 'sessions').sort(),
      issued
        .slice(25)
        .map((s) => s.sessionKey)
        .sort(),
    );
    for (const session of issued.slice(25)) await sessions.revoke(session.sessionKey);
  });

  it('the timer sweeps once at start (what expired while the process was down) and then periodically', async () => {
    const clock = testClock();
    const earlier = new Sessions(store, clock, ADMIN_TOKEN);
    earlier.stopSweeping();
    const leftBehind = await earlier.issueUser('u-left', '0x' + '4'.repeat(40), 1_000);
    clock.advance(2_000);

    const sessions = new Sessions(store, clock, ADMIN_TOKEN, { passIntervalMs: 50 });
    try {
      await waitFor(() => !keysOf(store, 'sessions').includes(leftBehind.sessionKey), { what: 'the start sweep' });
      const later = await sessions.issueUser('u-later', '0x' + '5'.repeat(40), 1_000);
      const live = await sessions.issueUser('u-live', '0x' + '6'.repeat(40), HOUR_MS);
      await sleep(200); // several passes while `later` is live: it stays
      assert.ok(keysOf(store, 'sessions').includes(later.sessionKey));
      clock.advance(2_000);
      await waitFor(() => !keysOf(store, 'sessions').includes(later.sessionKey), { what: 'a periodic sweep' });
      assert.deepEqual(keysOf(store, 'sessions'), [live.sessionKey]);
      assert.equal(sessions.resolve(live.token)?.kind, 'user');
      await sessions.revoke(live.sessionKey);
    } finally {
      sessions.stopSweeping();
    }
  });

  it('a batch that fails is reported and the sweep goes on at its next pass: it neither stops nor stops the process', async () => {
    const clock = testClock();
    const failures: string[] = [];
    const sessions = new Sessions(store, clock, ADMIN_TOKEN, {
      passIntervalMs: 20,
      onFailure: (err, db) => failures.push(`${db}: ${(err as Error).message}`),
    });
    try {
      // A record that breaks the sweep's rule (no integer expiresAtMs): its batch's transaction throws.
      const brokenKey = 'broken-session-record';
      await store.db('sessions').put(brokenKey, { userId: 'u-broken' } as never);
      await waitFor(() => failures.length >= 2, { what: 'the failure reported at two passes' });
      assert.match(failures[0]!, /^sessions: sessions record without an integer expiresAtMs/);
      await store.db('sessions').remove(brokenKey);
      // The sweep still runs: a session that expires now is swept at a later pass.
      const expiring = await sessions.issueUser('u-after-failure', '0x' + '7'.repeat(40), 1_000);
      clock.advance(2_000);
      await waitFor(() => !keysOf(store, 'sessions').includes(expiring.sessionKey), { what: 'a sweep after the failures' });
    } finally {
      sessions.stopSweeping();
    }
  });

  it('a challenge writes nothing; a used nonce is kept until it expires, then swept', async () => {
    const clock = testClock();
    const pool = new VerifyPool({ threads: 1 });
    const wrongSignature = `0x${'11'.repeat(65)}`;
    try {
      const config = {
        siwe: { domain: 'localhost', uri: 'http://localhost', chainId: 1 },
        loginNonceTtlMs: 300_000,
        loginNoncesPerIp: 128,
        loginNoncesPerNetwork: 2_048,
      };
      const login = new WalletLogin(store, clock, config, pool);
      login.stopSweeping();
      const first = login.challenge(Wallet.createRandom().address);
      assert.deepEqual(keysOf(store, 'loginNonces'), [], 'a challenge is stateless');
      await assert.rejects(login.verify(first.message, '0x12'), { code: 'INVALID_SIGNATURE' });
      assert.deepEqual(keysOf(store, 'loginNonces'), [first.nonce], 'spent by its first use, good or bad');
      await assert.rejects(login.verify(first.message, wrongSignature), {
        code: 'UNAUTHENTICATED',
        message: 'unknown or already used nonce',
      });
      clock.advance(200_000);
      const second = login.challenge(Wallet.createRandom().address);
      await assert.rejects(login.verify(second.message, '0x12'), { code: 'INVALID_SIGNATURE' });
      clock.advance(150_000); // first expired 50 s ago; second has 150 s left
      assert.deepEqual(await login.sweepExpiredBatch(), { examined: 2, removed: 1, isPassDone: true });
      assert.deepEqual(keysOf(store, 'loginNonces'), [second.nonce]);
      // Swept, yet still refused: an expired nonce is refused as expired (no record needed for that).
      await assert.rejects(login.verify(first.message, wrongSignature), { code: 'UNAUTHENTICATED', message: 'login nonce expired' });
      assert.deepEqual(keysOf(store, 'loginNonces'), [second.nonce]);
      clock.advance(200_000);
      assert.deepEqual(await login.sweepExpiredBatch(), { examined: 1, removed: 1, isPassDone: true });
      assert.deepEqual(keysOf(store, 'loginNonces'), []);
    } finally {
      await pool.close();
    }
  });
});

describe('expiry sweep of the real service', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const server of servers) await server.stop();
    if (servers[0] !== undefined) removeDataDir(servers[0]);
  });

  /** Opens the stopped service's LMDB (as test/contests/restart.test.ts does) and lists two databases. */
  async function recordsOf(server: TestServer): Promise<{ sessions: string[]; nonces: string[] }> {
    const store = openStore(server.dataDir);
    try {
      return { sessions: keysOf(store, 'sessions'), nonces: keysOf(store, 'loginNonces') };
    } finally {
      await store.close();
    }
  }

  it('a restart deletes the nonces and sessions that expired, and a live session still works', async () => {
    // Short lives first: a session and a used nonce that will have expired by the last start.
    const first = await startServer({ env: { PARLAYD_LOGIN_NONCE_TTL_MS: '1000', PARLAYD_SESSION_TTL_MS: '2500' } });
    servers.push(first);
    const api = client(first.baseUrl);
    const expiring = await loginWallet(first);
    const unused = await api.post('/v1/auth/wallet/challenge', { address: Wallet.createRandom().address });
    assert.equal(unused.status, 200);
    // Spent by a malformed signature: its record is kept until the nonce expires.
    assert.equal((await api.post('/v1/auth/wallet', { message: unused.body.message, signature: '0x00' })).status, 400);
    const expiredAtMs = Date.now() + 2_500;
    assert.equal(await first.stop(), 0);
    // They are on disk: the assertions below are not vacuous.
    const written = await recordsOf(first);
    assert.ok(written.sessions.includes(hashToken(expiring.token)));
    assert.ok(written.nonces.includes(unused.body.nonce));

    // Long lives next: a session and a used nonce that are still live at the last start.
    const second = await restartServer(first, { PARLAYD_LOGIN_NONCE_TTL_MS: String(HOUR_MS), PARLAYD_SESSION_TTL_MS: String(HOUR_MS) });
    servers.push(second);
    const live = await loginWallet(second);
    const pending = await client(second.baseUrl).post('/v1/auth/wallet/challenge', { address: Wallet.createRandom().address });
    assert.equal(pending.status, 200);
    assert.equal((await client(second.baseUrl).post('/v1/auth/wallet', { message: pending.body.message, signature: '0x00' })).status, 400);
    while (Date.now() <= expiredAtMs) await sleep(expiredAtMs - Date.now() + 5);
    assert.equal(await second.stop(), 0);

    const third = await restartServer(second);
    servers.push(third);
    const liveBalance = await client(third.baseUrl, live.token).get('/v1/user/balance');
    assert.deepEqual(
      { status: liveBalance.status, body: liveBalance.body },
      { status: 200, body: { available_micros: '0', reserved_micros: '0', at_risk_micros: '0', pending_withdrawal_micros: '0' } },
    );
    assert.equal((await client(third.baseUrl, expiring.token).get('/v1/user/balance')).status, 401);
    assert.equal(await third.stop(), 0);

    const left = await recordsOf(third);
    assert.deepEqual(left.sessions, [hashToken(live.token)]);
    // The live nonces: `pending`'s and the one `live` logged in with; the short-lived ones are gone.
    assert.equal(left.nonces.length, 2);
    assert.ok(left.nonces.includes(pending.body.nonce));
    assert.ok(!left.nonces.includes(unused.body.nonce));
  });
});
