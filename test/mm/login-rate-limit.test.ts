// Maker login rate limit (issue 21 item 2): a socket upgrade is an anonymous request and spends a token of
// its network's HTTP bucket; login recoveries (maker and wallet) hold a bounded share of the verify pool and
// go behind the turn's signed orders, so a login flood cannot starve RFQs; refused logins are logged as one
// summary line per interval with counts, not two lines each.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Wallet } from 'ethers';
import { isPoolOverloaded, VerifyPool } from '../../src/crypto/verify-pool.js';
import { waitFor } from '../helpers/wait.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { domainTagOf, MakerSocket, signChallenge } from '../helpers/makers.js';

async function tryOpen(server: TestServer, localAddress: string): Promise<{ status: number | 'open'; socket: MakerSocket | null }> {
  try {
    const socket = await MakerSocket.open(server, { localAddress });
    return { status: 'open', socket };
  } catch (err) {
    return { status: Number(/HTTP (\d+)/.exec(String(err))?.[1]), socket: null };
  }
}

function getStatusFrom(server: TestServer, localAddress: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: server.port, path, localAddress, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      })
      .on('error', reject);
  });
}

describe('maker socket upgrades spend the per-IP HTTP bucket', () => {
  let server: TestServer;
  const BURST = 4;
  before(async () => {
    server = await startServer({ env: { PARLAYD_RATE_LIMIT_PER_S: '1', PARLAYD_RATE_LIMIT_BURST: String(BURST) } });
  });
  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
    removeDataDir(server);
  });

  it('the burst of upgrades from one address, then 429; the same bucket as its HTTP requests; other addresses unaffected', async () => {
    const from = '127.0.0.71';
    const opened: MakerSocket[] = [];
    for (let i = 0; i < BURST; i++) {
      const attempt = await tryOpen(server, from);
      assert.equal(attempt.status, 'open', `upgrade ${i}`);
      opened.push(attempt.socket!);
    }
    assert.equal((await tryOpen(server, from)).status, 429);
    // One bucket for both: this address's anonymous HTTP is limited now too.
    assert.equal(await getStatusFrom(server, from, '/healthz'), 429);
    const other = await tryOpen(server, '127.0.0.72');
    assert.equal(other.status, 'open');
    for (const s of [...opened, other.socket!]) await s.close();
  });
});

describe('refused maker logins are logged as counts per interval', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { PARLAYD_MM_REFUSAL_LOG_INTERVAL_MS: '300' } });
  });
  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
    removeDataDir(server);
  });

  it('ten refused logins: no line each at info, summaries per interval counting them by reason', async () => {
    const stranger = Wallet.createRandom(); // signs correctly, but is not a registered maker
    const firstLogAt = server.logs.length;
    for (let i = 0; i < 10; i++) {
      const socket = await MakerSocket.open(server);
      const challenge = await socket.next('auth_challenge');
      socket.send({
        type: 'auth_response',
        address: stranger.address,
        signature: await signChallenge(stranger, challenge, domainTagOf(server)),
      });
      assert.equal((await socket.next('auth_result')).success, false);
      await socket.waitClosed();
    }
    // One summary per interval: on a slow machine the ten may straddle two intervals, so add up the summaries.
    const summaries = () =>
      server.logs.slice(firstLogAt).filter((l) => l['msg'] === 'maker sockets refused or closed before authentication');
    const refusedCount = () =>
      summaries().reduce((sum, l) => sum + Number((l['counts'] as Record<string, number>)['UNKNOWN_MAKER'] ?? 0), 0);
    await waitFor(() => refusedCount() >= 10, { what: 'summaries counting ten refusals', timeoutMs: 5_000 });
    await sleep(400);
    assert.equal(refusedCount(), 10);
    for (const summary of summaries()) assert.deepEqual(Object.keys(summary['counts'] as object), ['UNKNOWN_MAKER']);
    const lines = server.logs.slice(firstLogAt).filter((l) => /maker/.test(String(l['msg'])));
    assert.ok(
      lines.every((l) => l['msg'] === 'maker sockets refused or closed before authentication'),
      'no line for each refusal',
    );
  });
});

describe('the verify pool keeps a share for signed orders', () => {
  let pool: VerifyPool;
  before(() => (pool = new VerifyPool({ threads: 1, maxQueue: 8 })));
  after(async () => pool.close());

  it('logins hold at most a quarter of the queue; orders are still accepted past it', async () => {
    const wallet = Wallet.createRandom();
    const message = new TextEncoder().encode('hello');
    const signature = Buffer.from((await wallet.signMessage(message)).slice(2), 'hex');
    const logins = [pool.recoverPersonalSigner(message, signature, 'login'), pool.recoverPersonalSigner(message, signature, 'login')];
    assert.equal(pool.loginInFlight, 2);
    await assert.rejects(
      pool.recoverPersonalSigner(message, signature, 'login'),
      (err: unknown) => isPoolOverloaded(err) && err.reason === 'LOGIN_SHARE_FULL',
    );
    const orders = Array.from({ length: 6 }, () => pool.recoverPersonalSigner(message, signature));
    await assert.rejects(
      pool.recoverPersonalSigner(message, signature),
      (err: unknown) => isPoolOverloaded(err) && err.reason === 'QUEUE_FULL',
    );
    for (const result of await Promise.all([...logins, ...orders]))
      assert.deepEqual(result, { ok: true, address: wallet.address.toLowerCase() });
    assert.equal(pool.loginInFlight, 0);
    // Once answered, the share is free again.
    assert.equal((await pool.recoverPersonalSigner(message, signature, 'login')).ok, true);
  });
});
