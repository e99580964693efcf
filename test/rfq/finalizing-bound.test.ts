// Issue 33 item 7 against the real service: one maker with several sockets, every one quoting last-look
// quotes at absurd odds and never answering a last look, cannot hold a signed RFQ `finalizing` for its
// order's life (a free option). Its sockets are capped (PARLAYD_MM_MAX_SOCKETS_PER_MAKER), its quotes and
// last looks counted per address, and the RFQ's time in last looks bounded (PARLAYD_MAX_FINALIZING_MS): the
// other maker's firm quote fills. The pure rule is test/rfq/last-look.test.ts; the actor's timing to the
// millisecond, shard-timing.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connectMaker, connectNewMaker, registerMaker, type ConnectedMaker } from '../helpers/makers.js';
import { fundedTaker, signedOrder } from '../helpers/rfq.js';
import { startServer, type TestServer } from '../helpers/server.js';

const LAST_LOOK_MS = 400;
const MAX_FINALIZING_MS = 500;

let server: TestServer;
before(async () => {
  server = await startServer({
    env: {
      PARLAYD_QUOTE_WINDOW_MS: '5000',
      PARLAYD_LAST_LOOK_MS: String(LAST_LOOK_MS),
      PARLAYD_MAX_FINALIZING_MS: String(MAX_FINALIZING_MS),
    },
  });
});
after(() => server.stop());

test('4 sockets of one maker with last-look quotes never answered: 2 last looks in all, ended at the bound; the firm quote of another maker fills', async () => {
  const taker = await fundedTaker(server, 100_000_000);
  const greedy = await registerMaker(server);
  const sockets: ConnectedMaker[] = [];
  for (let i = 0; i < 4; i++) sockets.push(await connectMaker(server, greedy));
  // The fifth socket of the same maker is refused (default PARLAYD_MM_MAX_SOCKETS_PER_MAKER 4).
  await assert.rejects(connectMaker(server, greedy), /TOO_MANY_SOCKETS/);
  const firm = await connectNewMaker(server);
  const order = await signedOrder(taker.user.wallet, {
    wager_micros: 2_000_000,
    min_odds: 1.5,
    legs: [{ market_id: taker.market, direction: 'up' }],
    nonce: 1,
    expires_at_ms: Date.now() + 60_000, // a long life: without the bound, the last looks could fill it
    shield_on: false,
  });
  const created = taker.api.post('/v1/rfq?wait_ms=10000', { order });
  const rfqs = await Promise.all([...sockets, firm].map((m) => m.next('rfq')));
  const requestId = rfqs[0]!.request_id;
  firm.send({ type: 'quote', request_id: requestId, quote_id: 'firm', odds: 1.8, max_wager_micros: '9000000' });
  await firm.next('quote_ack');
  const quote = (i: number, j: number) =>
    sockets[i]!.send({
      type: 'quote',
      request_id: requestId,
      quote_id: `ll-${i}-${j}`,
      odds: 90 - 4 * i - j,
      max_wager_micros: '9000000',
      last_look: true,
    });
  // Sockets 0-2 quote 4 each (acknowledged), then socket 3 once: with it every socket has answered, and
  // quoting closes at once.
  for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) quote(i, j);
  for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) assert.equal((await sockets[i]!.next('quote_ack')).quote_id, `ll-${i}-${j}`);
  quote(3, 0);
  const result = await created;
  assert.equal(result.status, 201);
  assert.deepEqual([result.body.status, result.body.odds, result.body.quotes_received], ['completed', 1.8, 14]);
  const lastLooks = sockets.flatMap((s) => s.socket.received.filter((m) => m.type === 'last_look'));
  assert.equal(lastLooks.length, 2, 'one maker address is offered 2 last looks on an RFQ, whatever its sockets');
  const [first, second] = lastLooks as { deadline_ms: number }[];
  // The first runs its last_look_ms; the second, offered when the first ran out, ends at the bound.
  assert.equal(second!.deadline_ms - first!.deadline_ms, MAX_FINALIZING_MS - LAST_LOOK_MS);
  assert.equal((await firm.next('rfq_result')).outcome, 'won');
  await Promise.all([...sockets, firm].map((m) => m.close()));
});
