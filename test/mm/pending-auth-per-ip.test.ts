// Sockets awaiting authentication are bounded per remote address (PARLAYD_MM_MAX_PENDING_AUTH_PER_IP), under
// the service-wide bound: one client holding idle sockets must not lock every maker out. Past the bound the
// upgrade is refused with 429 RATE_LIMITED and Retry-After (contract section 2's per-IP limit); a place
// frees when one of that address's sockets authenticates or closes. Other addresses are unaffected: the
// test connects from 127.0.0.2 as a second client (Linux routes all of 127/8 to loopback).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { MAKER_WS_PATH, MakerSocket, domainTagOf, registerMaker, signChallenge } from '../helpers/makers.js';

const PER_IP = 2;

interface Refusal {
  status: number;
  retryAfter: string | undefined;
  body: unknown;
}

/** Opens a raw maker socket from `localAddress`; resolves 'open' (then closes it) or the refusal. */
function tryUpgrade(server: TestServer, localAddress = '127.0.0.1'): Promise<'open' | Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(server.wsUrl + MAKER_WS_PATH, { localAddress });
    ws.once('open', () => {
      ws.once('close', () => resolve('open'));
      ws.close(1000, 'bye');
    });
    ws.once('unexpected-response', (req, res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        req.destroy();
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode!, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, body: JSON.parse(text) });
      });
    });
    ws.once('error', reject);
  });
}

const REFUSED: Refusal = {
  status: 429,
  retryAfter: '1',
  body: { code: 'RATE_LIMITED', message: 'too many maker sockets awaiting authentication from this address' },
};

describe('maker sockets awaiting authentication, per remote address', () => {
  let server: TestServer;
  before(async () => (server = await startServer({ env: { PARLAYD_MM_MAX_PENDING_AUTH_PER_IP: String(PER_IP) } })));
  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
    removeDataDir(server);
  });

  it('past the bound one address gets 429 RATE_LIMITED; others still connect; auth or close frees a place', async () => {
    const maker = await registerMaker(server);
    const first = await MakerSocket.open(server);
    const second = await MakerSocket.open(server);
    const challenge = await first.next('auth_challenge');
    await second.next('auth_challenge');

    assert.deepEqual(await tryUpgrade(server), REFUSED);
    // The bound is this address's, not the service's.
    assert.equal(await tryUpgrade(server, '127.0.0.2'), 'open');

    // first authenticates: it leaves the pending set (before auth_result is sent), so a place is free.
    first.send({
      type: 'auth_response',
      address: maker.checksumAddress,
      signature: await signChallenge(maker.wallet, challenge, domainTagOf(server)),
    });
    assert.equal((await first.next('auth_result')).success, true);
    const third = await MakerSocket.open(server);
    await third.next('auth_challenge');
    assert.deepEqual(await tryUpgrade(server), REFUSED);

    // second closes: its place is free again.
    await second.close();
    const fourth = await MakerSocket.open(server);
    await fourth.next('auth_challenge');
    assert.deepEqual(await tryUpgrade(server), REFUSED);

    await Promise.all([first.close(), third.close(), fourth.close()]);
    assert.equal(await tryUpgrade(server), 'open');
  });
});
