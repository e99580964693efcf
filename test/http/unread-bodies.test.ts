// Bodies still arriving (issue 33 items 5 and 8; src/http/unread-bodies.ts), with raw sockets that trickle
// against the real service: a create's body has PARLAYD_CREATE_BODY_TIMEOUT_MS to arrive; slow creates are
// bounded per principal and per network; the bytes bodies in progress may grow to are bounded per IP and
// per network. Each refusal is 429 RATE_LIMITED with Retry-After and a closed connection. Each test speaks
// from its own 127.x.y.0/24 (all of 127/8 is loopback), so no test's sockets count against another's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';
import { firstStatusLine, openSlowBody, type SlowBody, type SlowBodyOptions } from '../helpers/slow-body.js';

// Room for the other tests' slow creates to stay open through a loaded machine's pauses.
const DEADLINE_MS = 3_000;
const PER_CALLER = 3;
const PER_NETWORK = 5;
const BYTES_PER_IP = 2 << 20;
const BYTES_PER_NETWORK = 3 << 20;
const FULL_BODY_BYTES = 64 * 1024;
/** Long enough that the sockets opened before are past the turn they began in, and so charged. */
const SETTLE_MS = 200;

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

describe('bodies still arriving', () => {
  let server: TestServer;
  const open: SlowBody[] = [];

  before(async () => {
    server = await startServer({
      env: {
        PARLAYD_CREATE_BODY_TIMEOUT_MS: String(DEADLINE_MS),
        PARLAYD_MAX_UNREAD_CREATES_PER_CALLER: String(PER_CALLER),
        PARLAYD_MAX_UNREAD_CREATES_PER_NETWORK: String(PER_NETWORK),
        PARLAYD_BODY_BYTES_IN_PROGRESS_PER_IP: String(BYTES_PER_IP),
        PARLAYD_BODY_BYTES_IN_PROGRESS_PER_NETWORK: String(BYTES_PER_NETWORK),
      },
    });
  });
  after(async () => {
    for (const body of open) body.destroy();
    await server.stop();
    removeDataDir(server);
  });

  async function slow(options: Omit<SlowBodyOptions, 'port'>): Promise<SlowBody> {
    const body = await openSlowBody({ port: server.port, ...options });
    open.push(body);
    return body;
  }
  const slowCreate = (token: string, localAddress: string) =>
    slow({ path: '/v1/rfq/unsigned', token, contentLength: 300, localAddress, trickleMs: 100 });
  const slowChallenge = (localAddress: string) => slow({ path: '/v1/auth/wallet/challenge', contentLength: FULL_BODY_BYTES, localAddress });

  /** The body was refused: 429 RATE_LIMITED with Retry-After, then the connection closed. */
  async function assertRefused(body: SlowBody): Promise<void> {
    await body.closed;
    const text = body.text();
    assert.equal(firstStatusLine(text), 'HTTP/1.1 429 Too Many Requests', text);
    assert.match(text, /\r\nRetry-After: 1\r\n/i);
    assert.deepEqual(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)), { code: 'RATE_LIMITED', message: 'rate limit exceeded' });
  }

  /** parlayd_http_slow_bodies_total{outcome} as /metrics shows it now (0 before its first count). */
  async function slowBodies(outcome: 'refused' | 'expired'): Promise<number> {
    const text = String((await client(server.baseUrl, server.adminToken).get('/metrics')).body);
    const line = text.split('\n').find((l) => l.startsWith(`parlayd_http_slow_bodies_total{outcome="${outcome}"} `));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  }

  function assertStillArriving(bodies: SlowBody[]): void {
    for (const body of bodies) assert.deepEqual({ isClosed: body.isClosed(), text: body.text() }, { isClosed: false, text: '' });
  }

  it('a create body not in by PARLAYD_CREATE_BODY_TIMEOUT_MS has its connection closed unanswered, and no RFQ is made', async () => {
    const user = await loginWallet(server);
    const body = await slowCreate(user.token, '127.0.1.1');
    const closedAfterMs = await body.closed;
    // uWS's own idle timeout would have closed it after ~10 s.
    assert.ok(closedAfterMs >= DEADLINE_MS - 50 && closedAfterMs < DEADLINE_MS + 3_000, `closed after ${closedAfterMs} ms`);
    assert.equal(body.text(), '');
    const rfqs = await client(server.baseUrl, user.token).get('/v1/user/rfqs?limit=10');
    assert.deepEqual(rfqs.body.rfqs, []);
    assert.equal(await slowBodies('expired'), 1);
  });

  it('past PARLAYD_MAX_UNREAD_CREATES_PER_CALLER a slow create of that principal is 429 and closed; another principal is not refused', async () => {
    const [user, other] = await Promise.all([loginWallet(server), loginWallet(server)]);
    const held = await Promise.all(Array.from({ length: PER_CALLER }, (_, i) => slowCreate(user.token, `127.0.2.${i + 1}`)));
    await settle();
    const refusedBefore = await slowBodies('refused');
    const refused = await slowCreate(user.token, '127.0.2.9');
    await assertRefused(refused);
    assert.equal(await slowBodies('refused'), refusedBefore + 1);
    const otherCaller = await slowCreate(other.token, '127.0.2.10');
    await settle();
    assertStillArriving([...held, otherCaller]);
  });

  it('past PARLAYD_MAX_UNREAD_CREATES_PER_NETWORK slow creates from one /24, the next is 429 whatever its principal and address', async () => {
    const users = await Promise.all(Array.from({ length: PER_NETWORK + 1 }, () => loginWallet(server)));
    const held = await Promise.all(users.slice(0, PER_NETWORK).map((user, i) => slowCreate(user.token, `127.0.3.${i + 1}`)));
    await settle();
    await assertRefused(await slowCreate(users[PER_NETWORK]!.token, '127.0.3.200'));
    // Another /24 is not refused.
    const elsewhere = await slowCreate(users[PER_NETWORK]!.token, '127.0.4.1');
    await settle();
    assertStillArriving([...held, elsewhere]);
  });

  it('past PARLAYD_BODY_BYTES_IN_PROGRESS_PER_IP and ..._PER_NETWORK a new slow body is 429 and closed; the rest keep arriving', async () => {
    // 32 bodies of 64 KiB are the IP's 2 MiB.
    const fullIp = await Promise.all(Array.from({ length: BYTES_PER_IP / FULL_BODY_BYTES }, () => slowChallenge('127.0.5.1')));
    await settle();
    await assertRefused(await slowChallenge('127.0.5.1'));
    // Another IP of the /24 has its own 2 MiB, but the network only 1 MiB more: 16 bodies.
    const fullNetwork = await Promise.all(
      Array.from({ length: (BYTES_PER_NETWORK - BYTES_PER_IP) / FULL_BODY_BYTES }, () => slowChallenge('127.0.5.2')),
    );
    await settle();
    await assertRefused(await slowChallenge('127.0.5.3'));
    assertStillArriving([...fullIp, ...fullNetwork]);
    // Once some go away, their bytes are free again.
    for (const body of fullIp.slice(0, 2)) body.destroy();
    await Promise.all(fullIp.slice(0, 2).map((body) => body.closed));
    await settle();
    const again = await slowChallenge('127.0.5.3');
    await settle();
    assertStillArriving([again]);
  });
});
