// Front-door load shedding (contract section 2: 503 OVERLOADED with Retry-After, nothing was accepted;
// docs/reliability.md, "Overload"), against the real service with a tiny in-flight bound: creates beyond it
// are refused before anything is done for them (token, body, recovery), nothing of theirs exists afterwards,
// a client that goes away gives its place back, and the service serves normally once the load is gone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { fundedTaker, unsignedBody } from '../helpers/rfq.js';
import type { TestUser } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const FUNDS_MICROS = 100_000_000;
const WAGER_MICROS = 2_000_000;
const MAX_IN_FLIGHT = 2;
/**
 * Long enough that the held creates are still in flight while the others arrive (a silent maker hears them),
 * with room for a loaded machine: at 1.5 s a held create could end before a probe found the service full.
 */
const QUOTE_WINDOW_MS = 4000;

let server: TestServer;
let taker: { user: TestUser; market: number; api: ReturnType<typeof client> };
let silentMaker: ConnectedMaker;

before(async () => {
  server = await startServer({
    env: {
      PARLAYD_MAX_IN_FLIGHT_CREATES: String(MAX_IN_FLIGHT),
      PARLAYD_QUOTE_WINDOW_MS: String(QUOTE_WINDOW_MS),
      // Only the in-flight bound is under test here; a slow test machine must not shed by delay.
      PARLAYD_MAX_EVENT_LOOP_DELAY_MS: '0',
    },
  });
  taker = await fundedTaker(server, FUNDS_MICROS);
  // Hears every RFQ and never quotes: each stays active, and its create in flight, for its whole window.
  silentMaker = await connectNewMaker(server);
});

after(async () => {
  await silentMaker.close();
  await server.stop(); // runs the ledger check on what the test left
});

const create = (body: Record<string, unknown>, options: { token?: string; waitMs?: number } = {}) =>
  client(server.baseUrl, options.token ?? taker.user.token).post(`/v1/rfq/unsigned?wait_ms=${options.waitMs ?? 10_000}`, body);

const bodyOf = (idempotencyKey?: string) =>
  unsignedBody([{ market_id: taker.market, direction: 'up' }], {
    wager_micros: WAGER_MICROS,
    ...(idempotencyKey === undefined ? {} : { idempotency_key: idempotencyKey }),
  });

/** Holds MAX_IN_FLIGHT creates open (their RFQs heard by the maker); resolves with their pending answers. */
async function fillInFlight() {
  const held = Array.from({ length: MAX_IN_FLIGHT }, () => create(bodyOf()));
  for (let i = 0; i < MAX_IN_FLIGHT; i++) await silentMaker.next('rfq');
  return held;
}

test('RFQ creates beyond PARLAYD_MAX_IN_FLIGHT_CREATES are 503 OVERLOADED with Retry-After, and nothing of theirs exists', async () => {
  const held = await fillInFlight();
  const refusedBodies = Array.from({ length: 4 }, () => bodyOf());
  const refused = await Promise.all(refusedBodies.map((body) => create(body)));
  for (const answer of refused) {
    assert.equal(answer.status, 503);
    assert.deepEqual(answer.body, { code: 'OVERLOADED', message: 'service is overloaded, nothing was accepted' });
    assert.equal(answer.headers.get('retry-after'), '1');
  }
  // Only the held two reserve their wagers. A create's write may be held up to PARLAYD_CREATE_COALESCE_MS after
  // its makers hear of it (docs/durability.md), so the second reservation can reach LMDB a moment later.
  const reserved = async () => (await taker.api.get('/v1/user/balance')).body.reserved_micros;
  await waitFor(async () => (await reserved()) === String(MAX_IN_FLIGHT * WAGER_MICROS), { what: 'the held creates reserved' });

  // Refused before the token and the body were looked at: a bad bearer and a broken body get 503 too.
  const badToken = await create(bodyOf(), { token: 'not-a-token' });
  assert.equal(badToken.status, 503);
  const broken = await client(server.baseUrl, taker.user.token).post('/v1/rfq/unsigned', undefined, {
    rawBody: '{"legs":',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(broken.status, 503);
  // Reads are not shed.
  assert.equal((await client(server.baseUrl).get('/healthz')).status, 200);

  for (const answer of await Promise.all(held)) assert.equal(answer.status, 201, JSON.stringify(answer.body));
  const history = await taker.api.get('/v1/user/rfqs?limit=100');
  assert.equal(history.body.rfqs.length, MAX_IN_FLIGHT);
  // Nothing was accepted: each refused idempotency key now creates a new RFQ (201), not a replay (200).
  for (const body of refusedBodies) {
    const again = await create(body, { waitMs: 0 });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    await silentMaker.next('rfq');
  }
});

test('a client that goes away while its create body is unread gives its place back', async () => {
  const held = Array.from({ length: MAX_IN_FLIGHT - 1 }, () => create(bodyOf()));
  for (let i = 0; i < MAX_IN_FLIGHT - 1; i++) await silentMaker.next('rfq');
  // The last place, taken by a request whose body never comes.
  const socket = connect({ host: '127.0.0.1', port: server.port });
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /v1/rfq/unsigned HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${taker.user.token}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"wager_micros":',
  );
  // Both places taken (read from the gauge, so no probe of ours takes a place meanwhile), then a create is shed.
  await waitFor(async () => (await inFlightCreates()) === MAX_IN_FLIGHT, { what: 'both in-flight places taken' });
  assert.equal((await create(bodyOf(), { waitMs: 0 })).status, 503);
  socket.destroy();
  // The abort frees the place: a create gets through again while the first one is still held.
  await waitFor(
    async () => {
      const answer = await create(bodyOf(), { waitMs: 0 });
      if (answer.status === 201) await silentMaker.next('rfq');
      return answer.status === 201;
    },
    { what: 'a create let through after the abort' },
  );
  for (const answer of await Promise.all(held)) assert.equal(answer.status, 201);
});

test('once the load is gone the service takes creates again', async () => {
  const held = await fillInFlight();
  assert.equal((await create(bodyOf(), { waitMs: 0 })).status, 503);
  await Promise.all(held);
  const answer = await create(bodyOf(), { waitMs: 0 });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  await silentMaker.next('rfq');
});

/** The service's count of admitted and unanswered creates (`/metrics`). */
async function inFlightCreates(): Promise<number> {
  const metrics = String((await client(server.baseUrl, server.adminToken).get('/metrics')).body);
  const line = metrics.split('\n').find((l) => l.startsWith('parlayd_http_in_flight_creates '));
  assert.ok(line !== undefined, 'the in-flight gauge is exported');
  return Number(line.split(' ')[1]);
}
