// Settlement of filled parlays and the maker PnL route (contract sections 4 and 7).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { credit, loginWallet, type TestUser } from '../helpers/users.js';
import { connectNewMaker, type ConnectedMaker } from '../helpers/makers.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { assertMoneyInvariant, autoQuote, unsignedBody } from '../helpers/rfq.js';

let server: TestServer;
let user: TestUser;
let maker: ConnectedMaker;

before(async () => {
  server = await startServer({ env: { PARLAYD_QUOTE_WINDOW_MS: '300' } });
  user = await loginWallet(server);
  await credit(server, user.address, 100_000_000);
  maker = await connectNewMaker(server);
  autoQuote(maker, { odds: 3.5 });
});

after(async () => {
  await maker.close();
  await server.stop();
});

const fill = async (legs: { market_id: number; direction: 'up' | 'down' }[], shield_on = false) => {
  const result = await client(server.baseUrl, user.token).post(
    '/v1/rfq/unsigned?wait_ms=5000',
    unsignedBody(legs, { wager_micros: 4_000_000, shield_on }),
  );
  assert.equal(result.body.status, 'completed', JSON.stringify(result.body));
  return result.body;
};

test('a parlay pays only when every leg wins; a lost leg pays nothing; a voided leg refunds the stake', async () => {
  const [a, b, c, d] = [
    (await createMarket(server)).market_id,
    (await createMarket(server)).market_id,
    (await createMarket(server)).market_id,
    (await createMarket(server)).market_id,
  ];
  await fill([
    { market_id: a, direction: 'up' },
    { market_id: b, direction: 'down' },
  ]); // wins: 14 USDC
  await fill(
    [
      { market_id: a, direction: 'up' },
      { market_id: c, direction: 'up' },
    ],
    true,
  ); // c is NO: lost
  const beforeThird = Date.now(); // since then: the user's third fill only, none of the shielded taker's
  await fill([
    { market_id: b, direction: 'down' },
    { market_id: d, direction: 'up' },
  ]); // d voided: refunded
  await assertMoneyInvariant(server, user, 100_000_000n);
  await resolveMarket(server, a, 'YES');
  const halfway = await assertMoneyInvariant(server, user, 100_000_000n);
  assert.equal(halfway.atRisk, 12_000_000n, 'nothing settles while a leg that could decide it is open');
  await resolveMarket(server, c, 'NO');
  await resolveMarket(server, b, 'NO');
  await resolveMarket(server, d, 'VOID');
  // +14 − 4 for the win, −4 for the loss, 0 for the void.
  const settled = await assertMoneyInvariant(server, user, 100_000_000n + 10_000_000n - 4_000_000n);
  assert.equal(settled.atRisk, 0n);
  assert.equal(settled.available, 106_000_000n);

  const pnl = await client(server.baseUrl, maker.sessionToken).get('/v1/mm/taker_pnl');
  assert.equal(pnl.status, 200);
  const rows = pnl.body.takers as { taker: string }[];
  assert.equal(rows.length, 2, 'the shielded fill is grouped under an opaque id, not the address');
  const open = rows.find((r) => r.taker === user.address);
  const shielded = rows.find((r) => r.taker !== user.address);
  // The taker's result, paid − wagered (contract section 11): +10 on the win, 0 on the refunded void.
  assert.deepEqual(open, {
    taker: user.address,
    fills: 2,
    wagered_micros: '8000000',
    paid_micros: '18000000',
    pnl_micros: '10000000',
    open_wagered_micros: '0',
  });
  assert.match(shielded!.taker, /^anon:[0-9a-f]{24}$/);
  assert.deepEqual(
    { ...shielded, taker: 'x' },
    { taker: 'x', fills: 1, wagered_micros: '4000000', paid_micros: '0', pnl_micros: '-4000000', open_wagered_micros: '0' },
  );
  assert.equal(pnl.body.next_cursor, null);

  // One taker a page, in taker order; the cursor is bound to its since_ms.
  const first = await client(server.baseUrl, maker.sessionToken).get('/v1/mm/taker_pnl?limit=1');
  assert.equal((first.body.takers as unknown[]).length, 1);
  const second = await client(server.baseUrl, maker.sessionToken).get(`/v1/mm/taker_pnl?limit=1&cursor=${first.body.next_cursor}`);
  assert.deepEqual(
    [...(first.body.takers as { taker: string }[]), ...(second.body.takers as { taker: string }[])].map((r) => r.taker),
    rows.map((r) => r.taker),
  );
  assert.equal(second.body.next_cursor, null);
  const otherSince = await client(server.baseUrl, maker.sessionToken).get(`/v1/mm/taker_pnl?since_ms=1&cursor=${first.body.next_cursor}`);
  assert.deepEqual([otherSince.status, otherSince.body.details?.[0]?.path], [400, '/cursor']);

  // A full page followed only by takers with nothing since since_ms is the last page (contract section 13).
  const onlyUser = await client(server.baseUrl, maker.sessionToken).get(`/v1/mm/taker_pnl?since_ms=${beforeThird}&limit=1`);
  assert.deepEqual(
    (onlyUser.body.takers as { taker: string }[]).map((r) => r.taker),
    [user.address],
  );
  assert.equal(onlyUser.body.next_cursor, null);
  const later = await client(server.baseUrl, maker.sessionToken).get(`/v1/mm/taker_pnl?since_ms=${Date.now() + 60_000}`);
  assert.deepEqual(later.body, { takers: [], next_cursor: null });
  const asUser = await client(server.baseUrl, user.token).get('/v1/mm/taker_pnl');
  assert.deepEqual([asUser.status, asUser.body.code], [403, 'FORBIDDEN']);
});

test("taker_pnl: wagered, paid and pnl over the same settled fills; the open fills' wager beside them", async () => {
  // A fresh taker, so its row has only these: one fill settled (won: 4 at 3.5 pays 14), one open.
  const taker = await loginWallet(server);
  await credit(server, taker.address, 20_000_000);
  const [settling, staying] = [(await createMarket(server)).market_id, (await createMarket(server)).market_id];
  for (const market_id of [settling, staying]) {
    const result = await client(server.baseUrl, taker.token).post(
      '/v1/rfq/unsigned?wait_ms=5000',
      unsignedBody([{ market_id, direction: 'up' }], { wager_micros: 4_000_000 }),
    );
    assert.equal(result.body.status, 'completed', JSON.stringify(result.body));
  }
  await resolveMarket(server, settling, 'YES');
  await assertMoneyInvariant(server, taker, 20_000_000n + 10_000_000n);
  const rows = (await client(server.baseUrl, maker.sessionToken).get('/v1/mm/taker_pnl')).body.takers as { taker: string }[];
  // pnl = paid − wagered on the row itself: 14 − 4, the open fill's 4 beside it, in none of the three.
  assert.deepEqual(
    rows.find((r) => r.taker === taker.address),
    {
      taker: taker.address,
      fills: 2,
      wagered_micros: '4000000',
      paid_micros: '14000000',
      pnl_micros: '10000000',
      open_wagered_micros: '4000000',
    },
  );
});
