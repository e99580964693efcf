// The maker socket's deadlines (interface.md "Limits", contract section 7): auth completed within the auth
// timeout of connecting (10 s by default), auth_response before the challenge lifetime ends (30 s by
// default). The rules run against small configured values; the defaults are checked on the configuration.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { MakerSocket, connectMaker, domainTagOf, registerMaker, signChallenge, type TestMaker } from '../helpers/makers.js';

describe('maker socket deadlines', () => {
  it('the defaults are the interface limits: 10 s to authenticate, 30 s challenge, 15 s heartbeat, 1 h session', () => {
    const config = loadConfig({});
    assert.equal(config.mmAuthTimeoutMs, 10_000);
    assert.equal(config.mmChallengeTtlMs, 30_000);
    assert.equal(config.mmHeartbeatMs, 15_000);
    assert.equal(config.mmSessionTtlMs, 3_600_000);
  });

  describe('challenge lifetime shorter than the auth timeout', () => {
    const CHALLENGE_TTL_MS = 600;
    let server: TestServer;
    let maker: TestMaker;

    before(async () => {
      server = await startServer({
        env: { PARLAYD_MM_CHALLENGE_TTL_MS: String(CHALLENGE_TTL_MS), PARLAYD_MM_AUTH_TIMEOUT_MS: '5000' },
      });
      maker = await registerMaker(server);
    });
    after(async () => {
      await server.stop();
      removeDataDir(server);
    });

    it('a valid auth_response after the challenge lifetime gets auth_result CHALLENGE_EXPIRED and the socket closes', async () => {
      const socket = await MakerSocket.open(server);
      const openedMs = Date.now();
      const challenge = await socket.next('auth_challenge');
      const signature = await signChallenge(maker.wallet, challenge, domainTagOf(server));
      // Enforced in server milliseconds: the signed timestamp is in seconds and may not have changed yet.
      await sleep(CHALLENGE_TTL_MS + 150 - (Date.now() - openedMs));
      socket.send({ type: 'auth_response', address: maker.checksumAddress, signature });
      assert.deepEqual(await socket.next('auth_result'), { type: 'auth_result', success: false, reason: 'CHALLENGE_EXPIRED' });
      assert.deepEqual(await socket.waitClosed(), { code: 1008, reason: 'CHALLENGE_EXPIRED' });
    });

    it('the same response within the lifetime succeeds', async () => {
      const mm = await connectMaker(server, maker);
      assert.ok(mm.sessionToken.length > 0);
      await mm.close();
    });
  });

  describe('auth timeout shorter than the challenge lifetime', () => {
    const AUTH_TIMEOUT_MS = 500;
    let server: TestServer;
    let maker: TestMaker;

    before(async () => {
      server = await startServer({
        env: {
          PARLAYD_MM_AUTH_TIMEOUT_MS: String(AUTH_TIMEOUT_MS),
          PARLAYD_MM_CHALLENGE_TTL_MS: '30000',
          PARLAYD_MM_HEARTBEAT_MS: '300',
        },
      });
      maker = await registerMaker(server);
    });
    after(async () => {
      await server.stop();
      removeDataDir(server);
    });

    it('a socket that does not complete auth in time gets error AUTH_TIMEOUT and is closed, though its challenge is still valid', async () => {
      const startedMs = Date.now();
      const socket = await MakerSocket.open(server);
      await socket.next('auth_challenge');
      const error = await socket.next('error', 10_000);
      assert.deepEqual(error, { type: 'error', code: 'AUTH_TIMEOUT', message: error.message });
      assert.deepEqual(await socket.waitClosed(), { code: 1008, reason: 'AUTH_TIMEOUT' });
      // Not before the deadline (margin for timer granularity); the upper side is only bounded by the wait.
      assert.ok(Date.now() - startedMs >= AUTH_TIMEOUT_MS - 20, `closed after ${Date.now() - startedMs} ms`);
    });

    it('a silent socket gets nothing but the challenge before it is closed (no heartbeat before auth)', async () => {
      const socket = await MakerSocket.open(server);
      await socket.waitClosed(10_000);
      assert.deepEqual(
        socket.received.map((m) => m.type),
        ['auth_challenge', 'error'],
      );
    });

    it('an authenticated maker is not closed by the auth timeout', async () => {
      const mm = await connectMaker(server, maker); // answers heartbeats
      await sleep(AUTH_TIMEOUT_MS * 2);
      assert.equal(mm.socket.isOpen, true);
      assert.equal(
        mm.socket.received.some((m) => m.type === 'error'),
        false,
      );
      await mm.close();
    });
  });
});
