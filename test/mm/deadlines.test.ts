// The maker socket's deadlines (interface.md "Limits", contract section 7): auth completed within the auth
// timeout of connecting (10 s by default), auth_response before the challenge lifetime ends (30 s by
// default). The defaults are checked on the configuration; the rules run here end to end against small
// configured values, and to the millisecond at the defaults in mm/timing.test (a manual clock).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
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

  // End to end, one server: the rules to the millisecond, and the ones about which deadline applies when,
  // are mm/timing.test's, on a manual clock. Here the real timers, uWS and the wire: a challenge shorter than
  // the auth deadline, so both can be seen to end a socket, and a heartbeat short enough to have run meanwhile.
  describe('challenge lifetime and auth deadline, on real timers', () => {
    const CHALLENGE_TTL_MS = 500;
    const AUTH_TIMEOUT_MS = 1_200;
    const HEARTBEAT_MS = 150;
    let server: TestServer;
    let maker: TestMaker;

    before(async () => {
      server = await startServer({
        env: {
          PARLAYD_MM_CHALLENGE_TTL_MS: String(CHALLENGE_TTL_MS),
          PARLAYD_MM_AUTH_TIMEOUT_MS: String(AUTH_TIMEOUT_MS),
          PARLAYD_MM_HEARTBEAT_MS: String(HEARTBEAT_MS),
        },
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
      await sleep(CHALLENGE_TTL_MS + 100 - (Date.now() - openedMs));
      socket.send({ type: 'auth_response', address: maker.checksumAddress, signature });
      assert.deepEqual(await socket.next('auth_result'), { type: 'auth_result', success: false, reason: 'CHALLENGE_EXPIRED' });
      assert.deepEqual(await socket.waitClosed(), { code: 1008, reason: 'CHALLENGE_EXPIRED' });
    });

    it('the same response within the lifetime succeeds', async () => {
      const mm = await connectMaker(server, maker);
      assert.ok(mm.sessionToken.length > 0);
      await mm.close();
    });

    it('a silent socket gets error AUTH_TIMEOUT and is closed at the auth deadline, and nothing else (no heartbeat before auth)', async () => {
      const startedMs = Date.now();
      const socket = await MakerSocket.open(server);
      await socket.next('auth_challenge');
      const error = await socket.next('error', 10_000);
      assert.deepEqual(error, { type: 'error', code: 'AUTH_TIMEOUT', message: error.message });
      assert.deepEqual(await socket.waitClosed(), { code: 1008, reason: 'AUTH_TIMEOUT' });
      // Not before the deadline (margin for timer granularity); the upper side is only bounded by the wait.
      assert.ok(Date.now() - startedMs >= AUTH_TIMEOUT_MS - 20, `closed after ${Date.now() - startedMs} ms`);
      assert.deepEqual(
        socket.received.map((m) => m.type),
        ['auth_challenge', 'error'],
      );
    });
  });
});
