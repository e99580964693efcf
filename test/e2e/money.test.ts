// Contract section 11 against the real server (2 shards, real makers over the socket): a 3-leg parlay's every
// outcome to the micro on both sides; collateral (a quote the maker cannot cover refused, a fill others made
// uncoverable passed over, 50 RFQs racing for a maker funded for 10); credits of makers and the protocol;
// contests' pools. The ledger check runs after every step that moves money, and again when the server stops.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { contestConfig, enter, getDetail, postContest, up } from '../helpers/contests.js';
import { admin, client } from '../helpers/http.js';
import { connectMaker, registerMaker, type ConnectedMaker, type ServerMessage } from '../helpers/makers.js';
import { createMarket, createMarkets, resolveMarket } from '../helpers/markets.js';
import { autoQuote, balanceOf, unsignedBody, type BalanceView } from '../helpers/rfq.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { fundedUser, type TestUser } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const USDC = 1_000_000;
const FUNDS = 10 * USDC;

let server: TestServer;
before(async () => {
  server = await startServer({ env: { PARLAYD_SHARDS: '2' } });
});
after(async () => {
  await server.stop();
});

/** A registered maker with `collateral` micros, connected, quoting every RFQ at `odds`. */
async function quotingMaker(collateral: number, odds: number): Promise<ConnectedMaker & { stop(): void }> {
  const maker = await connectMaker(server, await registerMaker(server, undefined, undefined, collateral));
  return Object.assign(maker, autoQuote(maker, { odds }));
}

async function makerBalance(maker: ConnectedMaker) {
  const res = await client(server.baseUrl, maker.sessionToken).get('/v1/mm/balance');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return {
    available: BigInt(res.body.available_micros),
    locked: BigInt(res.body.locked_micros),
    pending: BigInt(res.body.pending_withdrawal_micros),
  };
}

async function assertLedgerCheck(): Promise<{ credited: bigint; withdrawn: bigint; total: bigint }> {
  const res = await admin(server).get('/v1/admin/ledger/check');
  assert.equal(res.status, 200);
  assert.equal(res.body.ok, true, JSON.stringify(res.body));
  assert.deepEqual(res.body.differences, []);
  return { credited: BigInt(res.body.credited_micros), withdrawn: BigInt(res.body.withdrawn_micros), total: BigInt(res.body.total_micros) };
}

const view = (available: number, reserved: number, atRisk: number): BalanceView => ({
  available: BigInt(available),
  reserved: BigInt(reserved),
  atRisk: BigInt(atRisk),
});

describe('a 3-leg parlay, every outcome, both sides to the micro', () => {
  // Wager 2 USDC at odds 4: payout 8 USDC, liability 6 USDC.
  const WAGER = 2 * USDC;
  const PAYOUT = 8 * USDC;
  const LIABILITY = PAYOUT - WAGER;
  const COLLATERAL = 100 * USDC;
  let maker: ConnectedMaker & { stop(): void };
  /** What the maker's available should be: the collateral, moved by every case so far. */
  let makerAvailable = BigInt(COLLATERAL);

  before(async () => {
    maker = await quotingMaker(COLLATERAL, 4);
  });
  after(async () => {
    maker.stop();
    await maker.close();
  });

  /** A taker with a filled position on three fresh markets, both sides checked after the fill. */
  async function filledParlay(): Promise<{ taker: TestUser; markets: number[]; requestId: string }> {
    const taker = await fundedUser(server, FUNDS);
    const markets = [
      (await createMarket(server)).market_id,
      (await createMarket(server)).market_id,
      (await createMarket(server)).market_id,
    ];
    const res = await client(server.baseUrl, taker.token).post(
      '/v1/rfq/unsigned?wait_ms=3000',
      unsignedBody(
        markets.map((market_id) => ({ market_id, direction: 'up' as const })),
        { wager_micros: WAGER },
      ),
    );
    assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
    assert.equal(res.body.payout_micros, String(PAYOUT));
    assert.deepEqual(await balanceOf(server, taker), view(FUNDS - WAGER, 0, WAGER));
    assert.deepEqual(await makerBalance(maker), { available: makerAvailable - BigInt(LIABILITY), locked: BigInt(LIABILITY), pending: 0n });
    await assertLedgerCheck();
    return { taker, markets, requestId: res.body.request_id };
  }

  async function positionOf(taker: TestUser, requestId: string) {
    const res = await client(server.baseUrl, taker.token).get('/v1/user/positions');
    const position = res.body.positions.find((p: { request_id: string }) => p.request_id === requestId);
    assert.ok(position !== undefined);
    return position as { status: string; paid_micros: string | null; legs: Array<{ market_status: string }> };
  }

  const cases: Array<{ name: string; outcomes: Array<'YES' | 'NO' | 'VOID'>; taker: number; maker: number; status: string }> = [
    {
      name: 'won: every leg won pays the taker the payout, the liability from the maker',
      outcomes: ['YES', 'YES', 'YES'],
      taker: FUNDS - WAGER + PAYOUT,
      maker: -LIABILITY,
      status: 'won',
    },
    {
      name: 'lost with other legs open: one lost leg decides at once, stake and liability to the maker',
      outcomes: ['NO'],
      taker: FUNDS - WAGER,
      maker: WAGER,
      status: 'lost',
    },
    {
      name: 'a voided leg, the others won: each side gets its own back',
      outcomes: ['VOID', 'YES', 'YES'],
      taker: FUNDS,
      maker: 0,
      status: 'voided',
    },
    { name: 'a voided leg and a lost one: lost', outcomes: ['VOID', 'NO'], taker: FUNDS - WAGER, maker: WAGER, status: 'lost' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { taker, markets, requestId } = await filledParlay();
      for (const [i, outcome] of c.outcomes.entries()) await resolveMarket(server, markets[i]!, outcome);
      makerAvailable += BigInt(c.maker);
      await waitFor(async () => assert.deepEqual(await balanceOf(server, taker), view(c.taker, 0, 0)), {
        timeoutMs: 5_000,
        what: "the taker's settled balance",
      });
      assert.deepEqual(await makerBalance(maker), { available: makerAvailable, locked: 0n, pending: 0n });
      const position = await positionOf(taker, requestId);
      assert.equal(position.status, c.status);
      assert.equal(position.paid_micros, String(c.taker - (FUNDS - WAGER)));
      if (c.outcomes.length < 3) assert.equal(position.legs[2]!.market_status, 'OPEN', 'decided with a leg still open');
      // Once: the same resolution again moves nothing.
      await resolveMarket(server, markets[0]!, c.outcomes[0]!);
      assert.deepEqual(await balanceOf(server, taker), view(c.taker, 0, 0));
      assert.deepEqual((await makerBalance(maker)).available, makerAvailable);
      await assertLedgerCheck();
    });
  }
});

describe('collateral', () => {
  it('a quote its maker cannot cover is refused and not counted; the worse covered quote fills', async () => {
    // Wager 2 USDC: the better maker (odds 3) would owe 4 USDC and has 3.999999; the other (odds 2) owes 2.
    const poor = await quotingMaker(4 * USDC - 1, 3);
    const covered = await quotingMaker(1_000 * USDC, 2);
    try {
      const taker = await fundedUser(server, FUNDS);
      const market = (await createMarket(server)).market_id;
      const res = await client(server.baseUrl, taker.token).post(
        '/v1/rfq/unsigned?wait_ms=3000',
        unsignedBody([{ market_id: market, direction: 'up' }]),
      );
      assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
      assert.equal(res.body.odds, 2, 'the covered maker filled');
      assert.equal(res.body.quotes_received, 1, 'the refused quote is not counted');
      await waitFor(
        async () => {
          const reject = poor.socket.received.find((m) => m.type === 'quote_reject' && m.request_id === res.body.request_id);
          assert.equal((reject as { reason?: string } | undefined)?.reason, 'INSUFFICIENT_COLLATERAL');
        },
        { timeoutMs: 2_000, what: 'the quote_reject INSUFFICIENT_COLLATERAL' },
      );
      assert.deepEqual(await makerBalance(poor), { available: BigInt(4 * USDC - 1), locked: 0n, pending: 0n });
      assert.deepEqual(await makerBalance(covered), { available: BigInt(998 * USDC), locked: BigInt(2 * USDC), pending: 0n });
      await assertLedgerCheck();
    } finally {
      poor.stop();
      covered.stop();
      await Promise.all([poor.close(), covered.close()]);
    }
  });

  it('50 RFQs racing for a maker with collateral for 10: it fills exactly 10, the rest go to the next quote', async () => {
    // Wager 1 USDC. The best maker (odds 3) owes 2 USDC a fill and has 10 fills' worth and 1 micro short of
    // an 11th; the other (odds 2) owes 1 USDC a fill and has plenty.
    const FILLS = 10;
    const best = await quotingMaker(FILLS * 2 * USDC + 2 * USDC - 1, 3);
    const next = await quotingMaker(1_000 * USDC, 2);
    try {
      const takers = await Promise.all(Array.from({ length: 50 }, () => fundedUser(server, FUNDS)));
      const market = (await createMarket(server)).market_id;
      const results = await Promise.all(
        takers.map((t) =>
          client(server.baseUrl, t.token).post(
            '/v1/rfq/unsigned?wait_ms=5000',
            unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: USDC }),
          ),
        ),
      );
      const statuses = results.map((r) => r.body.status);
      assert.deepEqual(
        statuses,
        takers.map(() => 'completed'),
        JSON.stringify(results.find((r) => r.body.status !== 'completed')?.body),
      );
      // The answer names the fill's odds, and each maker quotes its own.
      const byBest = results.filter((r) => r.body.odds === 3).length;
      const byNext = results.filter((r) => r.body.odds === 2).length;
      assert.deepEqual([byBest, byNext], [FILLS, 50 - FILLS]);
      assert.deepEqual(await makerBalance(best), { available: BigInt(2 * USDC - 1), locked: BigInt(FILLS * 2 * USDC), pending: 0n });
      assert.deepEqual(await makerBalance(next), { available: BigInt((1_000 - 40) * USDC), locked: BigInt(40 * USDC), pending: 0n });
      await assertLedgerCheck();
      // Settled (the takers lost): the locked liability comes back to each maker with the stakes.
      await resolveMarket(server, market, 'NO');
      await waitFor(
        async () =>
          assert.deepEqual(await makerBalance(best), { available: BigInt(FILLS * 3 * USDC + 2 * USDC - 1), locked: 0n, pending: 0n }),
        { timeoutMs: 5_000, what: "the best maker's settled balance" },
      );
      await waitFor(async () => assert.deepEqual(await makerBalance(next), { available: BigInt(1_040 * USDC), locked: 0n, pending: 0n }), {
        timeoutMs: 5_000,
        what: "the next maker's settled balance",
      });
      await assertLedgerCheck();
    } finally {
      best.stop();
      next.stop();
      await Promise.all([best.close(), next.close()]);
    }
  });
});

describe('a quote other fills made uncoverable', () => {
  it('is passed over, and its maker hears rfq_result lost, not expired, on the RFQ that failed for it', async () => {
    // Wager 1 USDC at odds 3: 2 USDC of liability a fill, and the maker has exactly that. Both quotes stand
    // when they arrive (2 USDC available each time); a maker that never answers keeps both RFQs quoting for
    // the whole window, so both close after both quotes: one fills, the other finds the collateral gone.
    const maker = await quotingMaker(2 * USDC, 3);
    const silent = await connectMaker(server, await registerMaker(server));
    try {
      const takers = [await fundedUser(server, FUNDS), await fundedUser(server, FUNDS)];
      const market = (await createMarket(server)).market_id;
      const results = await Promise.all(
        takers.map((t) =>
          client(server.baseUrl, t.token).post(
            '/v1/rfq/unsigned?wait_ms=5000',
            unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: USDC }),
          ),
        ),
      );
      const filled = results.find((r) => r.body.status === 'completed');
      const failed = results.find((r) => r.body.status === 'failed');
      assert.ok(filled !== undefined && failed !== undefined, JSON.stringify(results.map((r) => r.body)));
      assert.equal(failed.body.error, 'INSUFFICIENT_LIQUIDITY');
      assert.equal(failed.body.quotes_received, 1, 'the quote stood when it arrived: it was passed over, not refused');
      const resultOf = (requestId: string) =>
        waitFor(
          () =>
            maker.socket.received.find((m): m is ServerMessage<'rfq_result'> => m.type === 'rfq_result' && m.request_id === requestId) ??
            false,
          { timeoutMs: 2_000, what: `the rfq_result of ${requestId}` },
        );
      assert.deepEqual(await resultOf(failed.body.request_id), { type: 'rfq_result', request_id: failed.body.request_id, outcome: 'lost' });
      assert.equal((await resultOf(filled.body.request_id)).outcome, 'won');
      assert.deepEqual(await makerBalance(maker), { available: 0n, locked: BigInt(2 * USDC), pending: 0n });
      await assertLedgerCheck();
    } finally {
      maker.stop();
      await Promise.all([maker.close(), silent.close()]);
    }
  });
});

describe('credits of makers and the protocol', () => {
  it('are idempotent by key, refuse another amount or account, and 404 for an unregistered maker', async () => {
    const maker = await registerMaker(server, undefined, undefined, 0);
    const key = randomUUID();
    const path = `/v1/admin/market-makers/${maker.checksumAddress}/credit`;
    const first = await admin(server).post(path, { amount_micros: 5 * USDC, idempotency_key: key });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body, {
      address: maker.address,
      credited_micros: String(5 * USDC),
      balance: { available_micros: String(5 * USDC), locked_micros: '0', pending_withdrawal_micros: '0' },
    });
    assert.deepEqual(
      (await admin(server).post(path, { amount_micros: 5 * USDC, idempotency_key: key })).body,
      first.body,
      'a replay credits nothing',
    );
    assert.equal((await admin(server).post(path, { amount_micros: 6 * USDC, idempotency_key: key })).body.code, 'IDEMPOTENCY_CONFLICT');
    assert.equal(
      (await admin(server).post('/v1/admin/protocol/credit', { amount_micros: 5 * USDC, idempotency_key: key })).body.code,
      'IDEMPOTENCY_CONFLICT',
    );
    const stranger = `0x${'12'.repeat(20)}`;
    const missing = await admin(server).post(`/v1/admin/market-makers/${stranger}/credit`, {
      amount_micros: 1,
      idempotency_key: randomUUID(),
    });
    assert.deepEqual([missing.status, missing.body.code], [404, 'MAKER_NOT_FOUND']);

    const before = (await admin(server).get('/v1/admin/protocol/balance')).body;
    const credited = await admin(server).post('/v1/admin/protocol/credit', { amount_micros: 7, idempotency_key: randomUUID() });
    assert.equal(credited.status, 200);
    assert.equal(BigInt(credited.body.balance.available_micros), BigInt(before.available_micros) + 7n);
    assert.equal((await client(server.baseUrl, (await fundedUser(server, 1)).token).get('/v1/admin/protocol/balance')).status, 403);
    await assertLedgerCheck();
  });

  it('a credit and its replay sent together both answer with the credited balance, whichever shard holds the key and the account', async () => {
    // A key's owner decides the credit and sends the money on to the account's owner: a replay must wait for
    // it there too, or its 200 comes with (and before) a balance without the credit (contract section 13).
    const user = await fundedUser(server, 1);
    let expected = 1n;
    for (let i = 0; i < 30; i++) {
      const body = { wallet: user.address, amount_micros: 1_000 + i, idempotency_key: randomUUID() };
      const answers = await Promise.all([1, 2].map(() => admin(server).post('/v1/admin/users/credit', body)));
      expected += BigInt(body.amount_micros);
      for (const answer of answers) {
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(BigInt(answer.body.balance.available_micros), expected, `credit ${i}: ${JSON.stringify(answer.body)}`);
      }
    }
    await assertLedgerCheck();
  });

  it('take amount_micros as a decimal string too (the contract form of the money fields it adds), as the same amount', async () => {
    const maker = await registerMaker(server, undefined, undefined, 0);
    const path = `/v1/admin/market-makers/${maker.checksumAddress}/credit`;
    const key = randomUUID();
    const first = await admin(server).post(path, { amount_micros: String(3 * USDC), idempotency_key: key });
    assert.deepEqual(
      [first.status, first.body.credited_micros, first.body.balance.available_micros],
      [200, String(3 * USDC), String(3 * USDC)],
    );
    const replay = await admin(server).post(path, { amount_micros: 3 * USDC, idempotency_key: key });
    assert.deepEqual([replay.status, replay.body.balance.available_micros], [200, String(3 * USDC)], 'one key, one amount: a replay');
    const tooLarge = await admin(server).post(path, { amount_micros: '9007199254740992', idempotency_key: randomUUID() });
    assert.deepEqual([tooLarge.status, tooLarge.body.code], [400, 'VALIDATION_FAILED']);

    const before = (await admin(server).get('/v1/admin/protocol/balance')).body;
    const credited = await admin(server).post('/v1/admin/protocol/credit', { amount_micros: '11', idempotency_key: randomUUID() });
    assert.equal(BigInt(credited.body.balance.available_micros), BigInt(before.available_micros) + 11n);

    const user = await fundedUser(server, 5 * USDC);
    const destination = `0x${'34'.repeat(20)}`;
    const withdrawal = await client(server.baseUrl, user.token).post('/v1/user/withdrawals', {
      amount_micros: String(2 * USDC),
      destination,
      idempotency_key: randomUUID(),
    });
    assert.deepEqual([withdrawal.status, withdrawal.body.amount_micros], [201, String(2 * USDC)]);
    assert.deepEqual(await balanceOf(server, user), view(3 * USDC, 0, 0));
    await assertLedgerCheck();
  });
});

describe("contests' pools", () => {
  async function protocol() {
    const body = (await admin(server).get('/v1/admin/protocol/balance')).body;
    return { available: BigInt(body.available_micros), committed: BigInt(body.committed_micros) };
  }

  it('a prize pool the protocol cannot fund is refused with nothing written', async () => {
    const markets = await createMarkets(server, 1);
    const { available } = await protocol();
    const res = await postContest(server, contestConfig(markets, { protocol_prize_pool_micros: Number(available) + 1 }), false);
    assert.deepEqual([res.status, res.body.code], [422, 'INSUFFICIENT_BALANCE']);
    assert.equal((await protocol()).available, available);
  });

  it('with a winner: the pool and the stakes pay the prize, the rest of the pot goes back to the protocol', async () => {
    const markets = await createMarkets(server, 1);
    const POOL = 3_000_001;
    const before = await protocol();
    const contest = await postContest(server, contestConfig(markets, { protocol_prize_pool_micros: POOL, winning_split_bps: [10_000] }));
    assert.equal(contest.status, 201, JSON.stringify(contest.body));
    const funded = await protocol(); // the helper credited the pool first
    assert.equal(funded.committed, before.committed + BigInt(POOL));
    const [winner, loser] = [await fundedUser(server, FUNDS), await fundedUser(server, FUNDS)];
    assert.equal((await enter(server, winner!, contest.body.contest_id, [up(markets[0]!)])).status, 201);
    assert.equal((await enter(server, loser!, contest.body.contest_id, [{ market_id: markets[0]!, direction: 'down' }])).status, 201);
    await resolveMarket(server, markets[0]!, 'YES');
    await waitFor(async () => assert.equal((await getDetail(server, contest.body.contest_id)).body.status, 'resolved'), {
      timeoutMs: 5_000,
      what: 'the contest resolved',
    });
    const pot = BigInt(POOL + 2 * USDC);
    const won = (await balanceOf(server, winner!)).available - BigInt(FUNDS - USDC);
    assert.ok(won > 0n && won <= pot);
    assert.deepEqual(await balanceOf(server, loser!), view(FUNDS - USDC, 0, 0));
    const after = await protocol();
    assert.equal(after.committed, funded.committed - BigInt(POOL), 'the pool left committed');
    assert.equal(after.available, funded.available + pot - won, 'what was not paid came back');
    await assertLedgerCheck();
  });

  it('with nobody to pay: the whole pool goes back to the protocol', async () => {
    const markets = await createMarkets(server, 1);
    const contest = await postContest(server, contestConfig(markets, { protocol_prize_pool_micros: 9 * USDC }));
    assert.equal(contest.status, 201);
    const funded = await protocol();
    await resolveMarket(server, markets[0]!, 'YES');
    await waitFor(async () => assert.equal((await getDetail(server, contest.body.contest_id)).body.status, 'resolved'), {
      timeoutMs: 5_000,
      what: 'the contest resolved',
    });
    assert.deepEqual(await protocol(), { available: funded.available + BigInt(9 * USDC), committed: funded.committed - BigInt(9 * USDC) });
    await assertLedgerCheck();
  });
});
