// Maker lock-out (issue 21 item 1): idle sockets from many addresses used to fill the service-wide places for
// sockets awaiting auth, and every maker's reconnect then got 503. Now, when every place is taken, the
// oldest socket still awaiting its auth_response is closed (AUTH_EVICTED) for the newcomer; a network (IPv4
// /24, IPv6 /48) has a cap of its own; and past half the places a new socket gets a short auth deadline.
// The caps are configured small. All of 127/8 is one /24, so the eviction server's per-network cap is set
// above its global cap, and the per-network cap gets a server of its own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { connectMaker, MakerSocket, registerMaker } from '../helpers/makers.js';

async function openPending(server: TestServer, localAddress: string): Promise<MakerSocket> {
  const socket = await MakerSocket.open(server, { localAddress });
  await socket.next('auth_challenge');
  return socket;
}

/** Opens a socket; the HTTP status of its refusal, or 'open'. */
async function tryOpen(server: TestServer, localAddress: string): Promise<number | 'open'> {
  try {
    const socket = await MakerSocket.open(server, { localAddress });
    await socket.next('auth_challenge');
    return 'open';
  } catch (err) {
    const status = /HTTP (\d+)/.exec(String(err))?.[1];
    assert.ok(status !== undefined, String(err));
    return Number(status);
  }
}

describe('every place for sockets awaiting auth taken: the oldest idle one makes room', () => {
  let server: TestServer;
  const PRESSURE_MS = 400;
  before(async () => {
    server = await startServer({
      env: {
        PARLAYD_MM_MAX_PENDING_AUTH: '4',
        PARLAYD_MM_MAX_PENDING_AUTH_PER_IP: '2',
        PARLAYD_MM_MAX_PENDING_AUTH_PER_NETWORK: '100',
        PARLAYD_MM_PRESSURE_AUTH_TIMEOUT_MS: String(PRESSURE_MS),
        PARLAYD_MM_AUTH_TIMEOUT_MS: '10000',
      },
    });
  });
  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
    removeDataDir(server);
  });

  it('two addresses fill the places; a maker from a third still connects and authenticates, evicting the oldest', async () => {
    const maker = await registerMaker(server);
    const squatters: MakerSocket[] = [];
    // Opened one after another: the first is the oldest. (The last two, above half the places, get the short
    // deadline: the maker connects within it.)
    for (const from of ['127.0.0.41', '127.0.0.41', '127.0.0.42', '127.0.0.42']) squatters.push(await openPending(server, from));
    const oldest = squatters[0]!;

    const connected = await connectMaker(server, maker, { localAddress: '127.0.0.43' });
    assert.deepEqual(await oldest.closed, { code: 1013, reason: 'AUTH_EVICTED' });
    assert.equal(oldest.received.at(-1)?.type, 'error');
    assert.equal((oldest.received.at(-1) as { code?: string }).code, 'AUTH_EVICTED');
    // The second oldest was left alone: one eviction per newcomer.
    assert.equal(squatters[1]!.isOpen, true);
    await connected.socket.close();
    for (const s of squatters) if (s.isOpen) await s.close();
  });

  it('past half the places a new socket gets the short deadline; below half the configured one', async () => {
    const early = [await openPending(server, '127.0.0.44'), await openPending(server, '127.0.0.45')];
    const startedMs = Date.now();
    const late = await openPending(server, '127.0.0.46'); // the third of four: above half
    assert.deepEqual(await late.closed, { code: 1008, reason: 'AUTH_TIMEOUT' });
    const lifetimeMs = Date.now() - startedMs;
    assert.ok(lifetimeMs >= PRESSURE_MS - 50 && lifetimeMs < 5_000, `closed after ${lifetimeMs} ms`);
    // The two opened below half still wait under the 10 s deadline.
    for (const s of early) assert.equal(s.isOpen, true);
    for (const s of early) await s.close();
  });
});

describe('sockets awaiting auth per network (IPv4 /24)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      env: { PARLAYD_MM_MAX_PENDING_AUTH_PER_IP: '2', PARLAYD_MM_MAX_PENDING_AUTH_PER_NETWORK: '3' },
    });
  });
  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
    removeDataDir(server);
  });

  it('addresses of one /24 share a cap: past it 429 RATE_LIMITED from any of them; a close frees a place', async () => {
    const a = [await openPending(server, '127.0.0.51'), await openPending(server, '127.0.0.51')];
    assert.equal(await tryOpen(server, '127.0.0.51'), 429, 'the address cap');
    const b = await openPending(server, '127.0.0.52');
    assert.equal(await tryOpen(server, '127.0.0.52'), 429, 'the network cap, though this address holds one');
    assert.equal(await tryOpen(server, '127.0.0.53'), 429, 'the network cap, for an address that holds none');
    await b.close();
    assert.equal(await tryOpen(server, '127.0.0.53'), 'open');
    for (const s of a) await s.close();
  });
});
