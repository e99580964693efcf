// Load shedding of creates (contract section 2: 503 OVERLOADED with Retry-After, nothing was accepted;
// docs/reliability.md, "Overload"), against the real service with a tiny in-flight bound: creates beyond it
// are refused before their handler runs (no recovery, no RFQ), nothing of theirs exists afterwards, creates
// whose body is still arriving hold no place (issue 33), and the service serves normally once the load is gone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { fundedTaker, unsignedBody } from '../helpers/rfq.js';
import { loginWallet, type TestUser } from '../helpers/users.js';
import { openSlowBody } from '../helpers/slow-body.js';
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
      // The slow creates below must outlast the victim's create on a loaded machine.
      PARLAYD_CREATE_BODY_TIMEOUT_MS: '5000',
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

  // The place is taken when the handler would start, after the bearer and the body: a bad bearer and a broken
  // body get their own errors, full or not, and take no place.
  const badToken = await create(bodyOf(), { token: 'not-a-token' });
  assert.equal(badToken.status, 401);
  const broken = await client(server.baseUrl, taker.user.token).post('/v1/rfq/unsigned', undefined, {
    rawBody: '{"legs":',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(broken.status, 400);
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

test('creates of an unfunded account whose bodies trickle hold no place: a funded create is 201 meanwhile', async () => {
  // Issue 33: each of these used to take an in-flight place before its body was read and keep it while the
  // body trickled (~10 s), so MAX_IN_FLIGHT of them made every other create 503.
  const attacker = await loginWallet(server);
  const slow = await Promise.all(
    Array.from({ length: 2 * MAX_IN_FLIGHT }, () =>
      openSlowBody({ port: server.port, path: '/v1/rfq/unsigned', token: attacker.token, contentLength: 300, trickleMs: 100 }),
    ),
  );
  try {
    // Past the turn their headers were read in: each is a body in progress now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const victim = await create(bodyOf(), { waitMs: 0 });
    assert.equal(victim.status, 201, JSON.stringify(victim.body));
    await silentMaker.next('rfq');
    // They were still trickling, unanswered, while the victim's create went through, and hold no place.
    for (const body of slow) assert.deepEqual({ isClosed: body.isClosed(), text: body.text() }, { isClosed: false, text: '' });
    assert.equal(await inFlightCreates(), 0);
  } finally {
    for (const body of slow) body.destroy();
  }
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
