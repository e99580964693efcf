// The maker SDK end to end: against the real service (child process) for the handshake, heartbeat, session
// renewal after AUTH_EXPIRED, reconnect after a drop and the stop on a refused auth; against an in-process
// gateway for the RFQ side (rfq events, quote / decline / cancel, last look, results), where the test is the
// RFQ engine's dispatcher. Plus the demo maker, run as its own process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import WebSocket from 'ws';
import { WebSocket as UndiciWebSocket } from 'undici';
import {
  MakerClient,
  backoffDelayMs,
  makerChallengeBytes,
  privateKeySigner,
  toSocketUrl,
  type MakerClientEvents,
  type SocketConstructor,
} from '../../src/sdk/index.js';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { client } from '../helpers/http.js';
import { repoRoot } from '../helpers/paths.js';
import { signingVectors as vectors } from '../helpers/vectors.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { registerMaker } from '../helpers/makers.js';
import { RecordingDispatcher, startStandaloneGateway, type StandaloneGateway } from '../helpers/standalone-gateway.js';
import { startFreezableRelay } from '../helpers/freezable-relay.js';
import { waitFor } from '../helpers/wait.js';
import { priceRfq } from '../../scripts/demo-maker.js';

const WS = WebSocket as unknown as SocketConstructor;

/** Records every event of a client, in order. */
function record(c: MakerClient) {
  const events: Array<{ name: keyof MakerClientEvents; payload: unknown }> = [];
  const names: Array<keyof MakerClientEvents> = [
    'authenticated',
    'rfq',
    'quote_ack',
    'quote_reject',
    'last_look',
    'rfq_result',
    'server_error',
    'auth_failed',
    'session_expired',
    'disconnected',
    'client_error',
  ];
  for (const name of names) c.on(name, (payload: unknown) => events.push({ name, payload }));
  return events;
}

describe('maker SDK signer', () => {
  it('privateKeySigner produces the signing vector signature (made by ethers) for the 75 challenge bytes', () => {
    const c = vectors.maker_challenge;
    const signer = privateKeySigner(vectors.signer_private_key);
    assert.equal(signer.address, vectors.signer_address.toLowerCase());
    const bytes = makerChallengeBytes({ nonce: c.nonce_hex, timestamp: c.timestamp }, c.domain_tag);
    assert.equal(Buffer.from(bytes).toString('hex'), c.bytes_hex);
    assert.equal(signer.signMessage(bytes), '0x' + c.signature_hex);
    assert.equal(personalMessageHash(bytes).length, 32);
  });

  it('refuses a key that is not 32 bytes of a valid scalar', () => {
    for (const bad of ['0x1234', '0x' + '00'.repeat(32), 'zz'.repeat(32)]) assert.throws(() => privateKeySigner(bad), TypeError);
  });

  it('backoff doubles from the initial delay up to the cap, within the jitter', () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1_000, factor: 2, jitter: 0.2 };
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((a) => backoffDelayMs(a, options, () => 0.5)),
      [100, 200, 400, 800, 1000, 1000],
    );
    assert.equal(
      backoffDelayMs(0, options, () => 0),
      80,
    );
    assert.equal(
      backoffDelayMs(0, options, () => 1),
      120,
    );
  });

  it('takes a base URL or the socket URL', () => {
    assert.equal(toSocketUrl('ws://127.0.0.1:8080'), 'ws://127.0.0.1:8080/v1/mm/ws');
    assert.equal(toSocketUrl('https://mm.example.com'), 'wss://mm.example.com/v1/mm/ws');
    assert.equal(toSocketUrl('ws://h:1/v1/mm/ws'), 'ws://h:1/v1/mm/ws');
  });
});

describe('maker SDK against the service', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ env: { PARLAYD_MM_HEARTBEAT_MS: '250', PARLAYD_MM_SESSION_TTL_MS: '60000' } });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('connects with a private key, authenticates, and the session is a bearer on maker routes', async () => {
    const key = Wallet.createRandom().privateKey;
    const maker = await registerMaker(server, new Wallet(key));
    const mm = new MakerClient({ url: server.wsUrl, privateKey: key, WebSocket: WS });
    await mm.connect();
    assert.equal(mm.isAuthenticated, true);
    assert.equal(mm.session?.address, maker.address);
    const session = await client(server.baseUrl, mm.session!.sessionToken).get('/v1/mm/session');
    assert.deepEqual(session.body, { address: maker.address, expires_at_ms: mm.session!.expiresAtMs });
    mm.close();
  });

  it('accepts any personal-sign signer (an ethers Wallet) and keeps the heartbeat: no drop over many intervals', async () => {
    const wallet = Wallet.createRandom();
    const maker = await registerMaker(server, wallet);
    const mm = new MakerClient({ url: server.baseUrl, signer: wallet, WebSocket: WS });
    const events = record(mm);
    await mm.connect();
    await new Promise((r) => setTimeout(r, 1_500)); // six heartbeat intervals; three unanswered would close
    assert.deepEqual(
      events.map((e) => e.name),
      ['authenticated'],
    );
    const list = await client(server.baseUrl, server.adminToken).get('/v1/admin/market-makers');
    assert.equal(list.body.makers.find((m: { address: string }) => m.address === maker.address).connections, 1);
    mm.close();
  });

  it('stops on UNKNOWN_MAKER: connect() rejects with AUTH_FAILED and no reconnect happens', async () => {
    const mm = new MakerClient({
      url: server.wsUrl,
      privateKey: Wallet.createRandom().privateKey,
      WebSocket: WS,
      reconnect: { initialDelayMs: 10 },
    });
    const events = record(mm);
    await assert.rejects(mm.connect(), (err: Error & { code?: string }) => err.code === 'AUTH_FAILED' && /UNKNOWN_MAKER/.test(err.message));
    assert.deepEqual(
      events.map((e) => e.name),
      ['auth_failed', 'disconnected'],
    );
    assert.deepEqual(events[1]!.payload, { code: 1008, reason: 'UNKNOWN_MAKER', willReconnect: false, reconnectInMs: null });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(events.length, 2);
  });

  it('a maker removed while connected is told MAKER_REMOVED, then its reconnect is refused and it stops', async () => {
    const key = Wallet.createRandom().privateKey;
    const maker = await registerMaker(server, new Wallet(key));
    const mm = new MakerClient({ url: server.wsUrl, privateKey: key, WebSocket: WS, reconnect: { initialDelayMs: 10, jitter: 0 } });
    const events = record(mm);
    await mm.connect();
    assert.equal((await client(server.baseUrl, server.adminToken).delete(`/v1/admin/market-makers/${maker.address}`)).status, 200);
    await waitFor(() => events.some((e) => e.name === 'auth_failed'), { timeoutMs: 5_000, intervalMs: 5, what: 'auth_failed' });
    await waitFor(() => events.filter((e) => e.name === 'disconnected').length === 2, {
      timeoutMs: 5_000,
      intervalMs: 5,
      what: 'second disconnect',
    });
    const names = events.map((e) => e.name);
    assert.deepEqual(names, ['authenticated', 'server_error', 'disconnected', 'auth_failed', 'disconnected']);
    assert.deepEqual(events[2]!.payload, { code: 1008, reason: 'MAKER_REMOVED', willReconnect: true, reconnectInMs: 10 });
    assert.deepEqual(events[3]!.payload, { reason: 'UNKNOWN_MAKER' });
    assert.equal((events[4]!.payload as { willReconnect: boolean }).willReconnect, false);
  });
});

describe('maker SDK session renewal', () => {
  it('after AUTH_EXPIRED it reconnects at once and authenticates with a new session', async () => {
    const server = await startServer({ env: { PARLAYD_MM_SESSION_TTL_MS: '700' } });
    try {
      const key = Wallet.createRandom().privateKey;
      await registerMaker(server, new Wallet(key));
      const mm = new MakerClient({ url: server.wsUrl, privateKey: key, WebSocket: WS, reconnect: { initialDelayMs: 5_000 } });
      const events = record(mm);
      const resumeAnswer = new Promise<string>((resolve) => {
        mm.on('resumed', () => resolve('resumed'));
        mm.on('resume_failed', (failed) => resolve(`resume_failed ${failed.reason}`));
      });
      await mm.connect();
      const first = mm.session!;
      await waitFor(() => events.filter((e) => e.name === 'authenticated').length === 2, {
        timeoutMs: 5_000,
        intervalMs: 5,
        what: 'second authentication',
      });
      assert.deepEqual(
        events.map((e) => e.name),
        ['authenticated', 'session_expired', 'disconnected', 'authenticated'],
      );
      // Immediately, not after the 5 s backoff: AUTH_EXPIRED is a renewal, not a failure.
      assert.deepEqual(events[2]!.payload, { code: 1008, reason: 'AUTH_EXPIRED', willReconnect: true, reconnectInMs: 0 });
      // And its stream is resumed under the expired session's token: the new socket authenticated the address,
      // so frames sent to the old socket after it closed (a fill's rfq_result) still reach the maker.
      assert.equal(await resumeAnswer, 'resumed');
      assert.notEqual(mm.session!.sessionToken, first.sessionToken);
      assert.ok(mm.session!.expiresAtMs > first.expiresAtMs);
      assert.equal((await client(server.baseUrl, first.sessionToken).get('/v1/mm/session')).status, 401);
      assert.equal((await client(server.baseUrl, mm.session!.sessionToken).get('/v1/mm/session')).status, 200);
      mm.close();
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});

/**
 * A TCP relay in front of the service, so a test can drop the link: cut() destroys every relayed connection
 * and refuses new ones until restore().
 */
async function startRelay(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let isUp = true;
  const relay = net.createServer((inbound) => {
    if (!isUp) return inbound.destroy();
    const outbound = net.connect(targetPort, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {}); // a cut link is the point of this relay
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${(relay.address() as net.AddressInfo).port}`,
    cut() {
      isUp = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      isUp = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        relay.close(() => resolve());
      }),
  };
}

describe('maker SDK reconnect after a drop', () => {
  it('a server that closes each socket right after its auth (RATE_LIMITED) is retried with growing backoff, not at the first delay for ever', async () => {
    // Two frames a second, a burst of two: the third frame closes the socket.
    const server = await startServer({ env: { PARLAYD_MM_FRAMES_PER_S: '2', PARLAYD_MM_FRAME_BURST: '2' } });
    try {
      const key = Wallet.createRandom().privateKey;
      await registerMaker(server, new Wallet(key));
      const mm = new MakerClient({
        url: server.wsUrl,
        privateKey: key,
        WebSocket: WS,
        resume: false,
        reconnect: { initialDelayMs: 20, factor: 2, maxDelayMs: 1_000, jitter: 0 },
      });
      const events = record(mm);
      mm.on('authenticated', () => {
        for (let i = 0; i < 5; i++) mm.decline(randomUUID());
      });
      await mm.connect();
      await waitFor(() => events.filter((e) => e.name === 'disconnected').length >= 4, {
        timeoutMs: 10_000,
        intervalMs: 5,
        what: 'four closes after auth',
      });
      mm.close();
      const drops = events.filter((e) => e.name === 'disconnected').map((e) => e.payload as MakerClientEvents['disconnected']);
      assert.deepEqual(
        drops.slice(0, 4).map((d) => [d.reason, d.reconnectInMs]),
        [
          ['RATE_LIMITED', 20],
          ['RATE_LIMITED', 40],
          ['RATE_LIMITED', 80],
          ['RATE_LIMITED', 160],
        ],
      );
    } finally {
      await server.stop();
    }
  });

  it('retries with growing backoff while the link is down and authenticates again once it is back', async () => {
    const server = await startServer();
    const relay = await startRelay(server.port);
    try {
      const key = Wallet.createRandom().privateKey;
      await registerMaker(server, new Wallet(key));
      const mm = new MakerClient({
        url: relay.url,
        privateKey: key,
        WebSocket: WS,
        reconnect: { initialDelayMs: 20, factor: 2, maxDelayMs: 200, jitter: 0 },
      });
      const events = record(mm);
      await mm.connect();
      const first = mm.session!;
      relay.cut();
      await waitFor(() => events.filter((e) => e.name === 'disconnected').length >= 5, {
        timeoutMs: 10_000,
        intervalMs: 5,
        what: 'reconnect attempts',
      });
      relay.restore();
      await waitFor(() => events.filter((e) => e.name === 'authenticated').length === 2, {
        timeoutMs: 10_000,
        intervalMs: 5,
        what: 'authenticated again',
      });
      const drops = events.filter((e) => e.name === 'disconnected').map((e) => e.payload as MakerClientEvents['disconnected']);
      assert.equal(drops[0]!.code, 1006); // no close frame: the link was cut
      assert.deepEqual(
        drops.slice(0, 5).map((d) => d.reconnectInMs),
        [20, 40, 80, 160, 200],
      );
      assert.ok(drops.every((d) => d.willReconnect));
      assert.notEqual(mm.session!.sessionToken, first.sessionToken);
      assert.equal(mm.isAuthenticated, true);
      mm.close();
    } finally {
      await relay.close();
      await server.stop();
      removeDataDir(server);
    }
  });
});

describe('maker SDK on a link that goes silent without closing', () => {
  // ws waits this long for the peer's close frame after close(); a dead link never sends one.
  const WS_CLOSE_TIMEOUT_MS = 30_000;
  // ws has terminate(); undici's (the global WebSocket from Node 22) has not, and never reports the close.
  const implementations: Array<{ name: string; WebSocket: SocketConstructor; hasTerminate: boolean }> = [
    { name: 'ws', WebSocket: WS, hasTerminate: true },
    { name: 'undici', WebSocket: UndiciWebSocket as unknown as SocketConstructor, hasTerminate: false },
  ];

  for (const impl of implementations) {
    it(
      `${impl.name}: a frozen link is dropped after serverSilenceMs and the client reconnects at once, without waiting for the close handshake`,
      { timeout: 60_000 },
      async () => {
        const server = await startServer({ env: { PARLAYD_MM_HEARTBEAT_MS: '250' } });
        const relay = await startFreezableRelay(server.port);
        const key = Wallet.createRandom().privateKey;
        const mm = new MakerClient({
          url: relay.url,
          privateKey: key,
          WebSocket: impl.WebSocket,
          serverSilenceMs: 1_500, // six heartbeats: a noisy machine does not trip it on a live link
          reconnect: { initialDelayMs: 20, jitter: 0 },
        });
        try {
          await registerMaker(server, new Wallet(key));
          const events = record(mm);
          await mm.connect();
          const first = mm.session!;
          relay.freeze();
          const frozenAtMs = Date.now();
          // Generous, yet below the close timeout: a client that waits for the close handshake to give up fails.
          await waitFor(() => events.filter((e) => e.name === 'authenticated').length === 2, {
            timeoutMs: WS_CLOSE_TIMEOUT_MS / 2,
            intervalMs: 5,
            what: 'reconnected after the freeze',
          });
          assert.ok(Date.now() - frozenAtMs < WS_CLOSE_TIMEOUT_MS);
          assert.deepEqual(
            events.map((e) => e.name),
            ['authenticated', 'disconnected', 'authenticated'],
            JSON.stringify(events),
          );
          assert.deepEqual(events[1]!.payload, { code: 1006, reason: 'server silent', willReconnect: true, reconnectInMs: 20 });
          assert.equal(relay.acceptedCount, 2); // the new session came over a new connection, past the frozen one
          assert.notEqual(mm.session!.sessionToken, first.sessionToken);
          // terminate() frees the dead socket at once instead of holding it through the close timeout.
          if (impl.hasTerminate)
            await waitFor(() => relay.frozenOpenCount === 0, {
              timeoutMs: WS_CLOSE_TIMEOUT_MS / 2,
              intervalMs: 5,
              what: 'dead socket released',
            });
        } finally {
          mm.close(); // before the relay closes, so the drop it causes does not start a reconnect
          await relay.close();
          await server.stop();
          removeDataDir(server);
        }
      },
    );
  }
});

describe('maker SDK close() on a link that went silent', () => {
  it(
    'ws: close() drops the dead socket after its short grace instead of ws holding it through the 30 s close timeout',
    { timeout: 60_000 },
    async () => {
      const server = await startServer();
      const relay = await startFreezableRelay(server.port);
      const key = Wallet.createRandom().privateKey;
      const mm = new MakerClient({ url: relay.url, privateKey: key, WebSocket: WS, reconnect: false });
      try {
        await registerMaker(server, new Wallet(key));
        await mm.connect();
        relay.freeze();
        mm.close();
        // The close frame cannot reach the server; without the grace the socket stays open 30 s.
        await waitFor(() => relay.frozenOpenCount === 0, { timeoutMs: 10_000, intervalMs: 5, what: 'dead socket released after close()' });
      } finally {
        await relay.close();
        await server.stop();
        removeDataDir(server);
      }
    },
  );
});

describe('maker SDK RFQ flow (in-process gateway as the RFQ engine)', () => {
  let gw: StandaloneGateway;
  let dispatcher: RecordingDispatcher;
  before(async () => {
    gw = await startStandaloneGateway();
    dispatcher = gw.dispatcher;
  });
  after(() => gw.close());

  /** A fresh rfq as the engine would broadcast it (a new request_id each time). */
  function rfqMessage() {
    return {
      type: 'rfq' as const,
      request_id: randomUUID(),
      legs: [{ market_id: 7, direction: 'down' as const }],
      wager_micros: '2500000',
      order_type: 1 as const,
      quote_deadline_ms: Date.now() + 300,
      expires_at_ms: Date.now() + 5_000,
      taker: null,
    };
  }

  async function connected(onLastLook?: (m: MakerClientEvents['last_look']) => boolean | Promise<boolean>) {
    const key = Wallet.createRandom().privateKey;
    const maker = await gw.register(new Wallet(key));
    const mm = new MakerClient({ url: gw.wsUrl, privateKey: key, WebSocket: WS, ...(onLastLook === undefined ? {} : { onLastLook }) });
    const events = record(mm);
    await mm.connect();
    const makerId = gw.gateway.connectedMakerIds().at(-1)!;
    return { mm, maker, makerId, events };
  }

  it('an rfq becomes an event; quote(), decline() and cancelQuote() reach the engine; acks and results come back as events', async () => {
    const { mm, maker, makerId, events } = await connected();
    const rfq = rfqMessage();
    const rfqSeen = mm.once('rfq');
    gw.gateway.broadcast(rfq);
    assert.deepEqual(await rfqSeen, rfq);

    const quoteId = mm.quote(rfq.request_id, { odds: 1.9412, maxWagerMicros: 10_000_000n, quoteId: 'mine-1' });
    assert.equal(quoteId, 'mine-1');
    const quoted = await dispatcher.waitFor((e) => e.kind === 'quote' && e.makerId === makerId);
    assert.deepEqual(quoted, {
      kind: 'quote',
      makerId,
      address: maker.address,
      msg: { type: 'quote', request_id: rfq.request_id, quote_id: 'mine-1', odds: 1.9412, max_wager_micros: '10000000', last_look: false },
    });
    const ackSeen = mm.once('quote_ack');
    gw.gateway.send(makerId, { type: 'quote_ack', request_id: rfq.request_id, quote_id: 'mine-1', received_at_ms: 7 });
    assert.deepEqual(await ackSeen, { type: 'quote_ack', request_id: rfq.request_id, quote_id: 'mine-1', received_at_ms: 7 });

    mm.cancelQuote(rfq.request_id, 'mine-1');
    mm.decline(rfq.request_id);
    await dispatcher.waitFor((e) => e.kind === 'decline' && e.makerId === makerId);
    assert.deepEqual(
      dispatcher.events.filter((e) => e.makerId === makerId && e.kind !== 'quote').map((e) => e.kind),
      ['quote_cancel', 'decline'],
    );

    const resultSeen = mm.once('rfq_result');
    gw.gateway.send(makerId, { type: 'rfq_result', request_id: rfq.request_id, outcome: 'lost' });
    assert.deepEqual(await resultSeen, { type: 'rfq_result', request_id: rfq.request_id, outcome: 'lost' });
    assert.deepEqual(
      events.map((e) => e.name),
      ['authenticated', 'rfq', 'quote_ack', 'rfq_result'],
    );
    mm.close();
  });

  it('quote() refuses odds with more than 4 decimals and a non-positive size before sending; nothing is sent unauthenticated', async () => {
    const { mm } = await connected();
    assert.throws(() => mm.quote(randomUUID(), { odds: 1.23456, maxWagerMicros: 1 }), RangeError);
    assert.throws(() => mm.quote(randomUUID(), { odds: 1.5, maxWagerMicros: 0 }), RangeError);
    // A number past 2^53 is no longer the size it was written as (2 ** 63 prints as 9223372036854776000).
    assert.throws(() => mm.quote(randomUUID(), { odds: 1.5, maxWagerMicros: 2 ** 63 }), RangeError);
    mm.close();
    const fresh = new MakerClient({ url: gw.wsUrl, privateKey: Wallet.createRandom().privateKey, WebSocket: WS });
    assert.throws(
      () => fresh.decline(randomUUID()),
      (err: Error & { code?: string }) => err.code === 'NOT_CONNECTED',
    );
  });

  it('last look: the callback decides; its answer reaches the engine as last_look_response', async () => {
    const decisions = new Map<string, boolean>([
      ['accept-me', true],
      ['reject-me', false],
    ]);
    const { mm, makerId } = await connected((m) => decisions.get(m.quote_id) ?? false);
    const requestId = randomUUID();
    for (const quoteId of decisions.keys()) {
      gw.gateway.send(makerId, {
        type: 'last_look',
        request_id: requestId,
        quote_id: quoteId,
        fill_wager_micros: '1000000',
        deadline_ms: Date.now() + 200,
      });
    }
    await waitFor(() => dispatcher.events.filter((e) => e.kind === 'last_look_response' && e.makerId === makerId).length === 2, {
      intervalMs: 5,
      what: 'two last_look_responses',
    });
    const answers = dispatcher.events
      .filter((e) => e.kind === 'last_look_response' && e.makerId === makerId)
      .map((e) => 'msg' in e && e.msg);
    assert.deepEqual(answers, [
      { type: 'last_look_response', request_id: requestId, quote_id: 'accept-me', accept: true },
      { type: 'last_look_response', request_id: requestId, quote_id: 'reject-me', accept: false },
    ]);
    mm.close();
  });

  it(
    'a listener that throws is reported as client_error; the connection stays up and later events still arrive',
    { timeout: 10_000 },
    async () => {
      const { mm, makerId, events } = await connected();
      try {
        await throwingListenerKeepsTheSession(mm, makerId, events);
      } finally {
        mm.close(); // a client left reconnecting would keep the test process alive
      }
    },
  );

  async function throwingListenerKeepsTheSession(mm: MakerClient, makerId: string, events: ReturnType<typeof record>) {
    mm.on('rfq', () => {
      throw new Error('bug in the bot');
    });
    for (let i = 0; i < 2; i++) {
      const message = rfqMessage();
      const seen = mm.once('rfq');
      gw.gateway.send(makerId, message);
      // Bounded: with the socket closed by the first throw, this rfq would never come.
      const notSeen = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`rfq ${i} not seen within 3 s`)), 3_000).unref());
      assert.equal((await Promise.race([seen, notSeen])).request_id, message.request_id);
    }
    await waitFor(() => events.filter((e) => e.name === 'client_error').length === 2, { intervalMs: 5, what: 'two client_errors' });
    assert.match(String((events.find((e) => e.name === 'client_error')?.payload as { error: Error }).error.message), /bug in the bot/);
    assert.ok(!events.some((e) => e.name === 'disconnected'), 'the socket was not closed');
    assert.ok(gw.gateway.connectedMakerIds().includes(makerId));
    // Still a working session: a quote reaches the engine.
    mm.quote(randomUUID(), { odds: 2, maxWagerMicros: 1_000_000n, quoteId: 'after' });
    await dispatcher.waitFor((e) => e.kind === 'quote' && e.makerId === makerId);
  }

  it('last look: a callback that throws answers accept false and reports client_error', async () => {
    const { mm, makerId, events } = await connected(() => {
      throw new Error('pricing service down');
    });
    const requestId = randomUUID();
    gw.gateway.send(makerId, {
      type: 'last_look',
      request_id: requestId,
      quote_id: 'q',
      fill_wager_micros: '1',
      deadline_ms: Date.now() + 200,
    });
    const answer = await dispatcher.waitFor((e) => e.kind === 'last_look_response' && e.makerId === makerId);
    assert.equal('msg' in answer && answer.msg['accept'], false);
    const reported = events.find((e) => e.name === 'client_error');
    assert.match(String((reported?.payload as { error: Error }).error.message), /pricing service down/);
    mm.close();
  });
});

describe('demo maker', () => {
  it('prices n fair-coin legs at 2^n less the edge, rounded down to 4 decimals, sized to the payout budget', () => {
    const params = { edgeBps: 300, maxPayoutMicros: 1_000_000_000n };
    assert.deepEqual(priceRfq({ legs: [{ market_id: 1, direction: 'up' }], wager_micros: '1000000', order_type: 2 }, params), {
      kind: 'quote',
      odds: 1.94,
      maxWagerMicros: 515_463_917n,
    });
    const three = priceRfq(
      { legs: [1, 2, 3].map((id) => ({ market_id: id, direction: 'up' as const })), wager_micros: '1000000', order_type: 1 },
      params,
    );
    assert.deepEqual(three, { kind: 'quote', odds: 7.6, maxWagerMicros: 131_578_947n }); // 8 x (1 - 5%)
    assert.deepEqual(
      priceRfq({ legs: [{ market_id: 1, direction: 'up' }], wager_micros: '600000000', order_type: 2 }, params).kind,
      'decline',
    );
    assert.equal(priceRfq({ legs: [{ market_id: 1, direction: 'up' }], wager_micros: '600000000', order_type: 1 }, params).kind, 'quote');
  });

  it('runs as a process: registers itself, authenticates and stays connected', async () => {
    const server = await startServer();
    const child = spawn(process.execPath, [path.join(repoRoot, 'dist/scripts/demo-maker.js'), '--url', server.wsUrl, '--register'], {
      env: { PATH: process.env['PATH'] ?? '', PARLAYD_ADMIN_TOKEN: server.adminToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const lines = createInterface({ input: child.stdout! });
      const authenticated = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('demo maker did not authenticate')), 10_000);
        lines.on('line', (line) => {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (entry['event'] === 'authenticated') {
            clearTimeout(timer);
            resolve(entry);
          }
        });
      });
      const list = await client(server.baseUrl, server.adminToken).get('/v1/admin/market-makers');
      assert.deepEqual(
        list.body.makers.map((m: { address: string; connections: number }) => [m.address, m.connections]),
        [[authenticated['address'], 1]],
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await server.stop();
      removeDataDir(server);
    }
  });
});
