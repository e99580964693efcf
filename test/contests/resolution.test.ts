// Contest resolution against the real server (contract section 8): pick outcomes follow markets, and when
// every contest market is final the contest resolves in one step: ranks, payouts, net payouts and balances,
// for each game_type, with ties, voided picks and the rounding rule; what a contest does not pay (rounding, no
// winner) goes back to the protocol's available (contract section 11), checked against the protocol's balance
// and the ledger check. Expected numbers are worked out by hand here from the contract's rules
// (docs/contests.md), not by calling the service's own scoring.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import type { TestUser } from '../helpers/users.js';
import { adminEntries, contestConfig, createContest, down, enter, getDetail, MoneyBook, up, type Pick } from '../helpers/contests.js';
import { assertApiError } from '../helpers/errors.js';
import { admin, client } from '../helpers/http.js';
import { createMarkets, resolveMarket } from '../helpers/markets.js';

const BET = 1_000_000;

let server: TestServer;
let book: MoneyBook;

before(async () => {
  server = await startServer();
  book = new MoneyBook(server);
});
afterEach(async () => book.check());
after(async () => {
  await server.stop();
});

/**
 * The case a review reproduced (contract section 8): A picks m1, which is voided; B picks m2, which resolves
 * NO, so B lost. Whether the rule is "non-voided picks all won" (outcast) or "never eliminated" (survivor), A
 * is the only winner: the pot (2 × 1_000_000) goes to A at rank 1, B is rank 2 with nothing.
 */
async function allVoidedAgainstALoser(gameType: 'outcast' | 'survivor') {
  const [m1, m2] = (await createMarkets(server, 2)) as [number, number];
  const contest = await createContest(server, contestConfig([m1, m2], { game_type: gameType, winning_split_bps: [] }));
  const users = await book.fundedUsers(2, BET);
  const [a, b] = users as [TestUser, TestUser];
  await enterAll(contest.contest_id, [
    [a, [up(m1)]],
    [b, [up(m2)]],
  ]);
  await resolveMarket(server, m1, 'VOID');
  await resolveMarket(server, m2, 'NO');
  assert.deepEqual(await results(contest.contest_id, users), [
    { payout: 2_000_000, net: 1_000_000, rank: 1 },
    { payout: 0, net: -BET, rank: 2 },
  ]);
  book.settled(a, BET, 2_000_000);
  book.settled(b, BET, 0);
  return { contestId: contest.contest_id, a, m1 };
}

/** The protocol account: prize pools leave its available at creation; what a contest does not pay comes back. */
async function protocolBalance(): Promise<{ available: bigint; committed: bigint }> {
  const res = await admin(server).get('/v1/admin/protocol/balance');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { available: BigInt(res.body.available_micros), committed: BigInt(res.body.committed_micros) };
}

/**
 * After a contest resolved: its pool left `committed` and exactly `returnedMicros` came back to `available`,
 * against the balance read once the contest was created (its pool committed); and the running service's
 * ledger check finds every bucket equal to its transfers.
 */
async function assertReturnedToProtocol(created: { available: bigint; committed: bigint }, poolMicros: number, returnedMicros: number) {
  assert.deepEqual(await protocolBalance(), {
    available: created.available + BigInt(returnedMicros),
    committed: created.committed - BigInt(poolMicros),
  });
  const check = await admin(server).get('/v1/admin/ledger/check');
  assert.equal(check.status, 200);
  assert.equal(check.body.ok, true, JSON.stringify(check.body));
  assert.deepEqual(check.body.differences, []);
}

async function enterAll(contestId: string, picksByUser: Array<[TestUser, Pick[]]>): Promise<void> {
  // One at a time, so entry order is the order written here.
  for (const [user, picks] of picksByUser) {
    const res = await enter(server, user, contestId, picks);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    book.staked(user, BET);
  }
}

async function continueEntry(user: TestUser, contestId: string, entryIndex: number, picks: Pick[]): Promise<void> {
  const res = await enter(server, user, contestId, picks, entryIndex);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.reserved_micros, '0');
}

/** The admin view of (user, payout, net, rank) per entry, in entry order of `users`. */
async function results(contestId: string, users: TestUser[]) {
  const entries = await adminEntries(server, contestId);
  return users.map((u) => {
    const e = entries.find((x) => x.user_id === u.userId);
    assert.ok(e !== undefined);
    return { payout: e.payout_micros, net: e.net_payout_micros, rank: e.rank };
  });
}

describe('lineups', () => {
  it('ranks by resolved wins; tied places share their splits; voided picks count neither way; balances move', async () => {
    const markets = await createMarkets(server, 3);
    const [m1, m2, m3] = markets as [number, number, number];
    const pool = 1_000_001;
    const contest = await createContest(
      server,
      contestConfig(markets, {
        protocol_prize_pool_micros: pool,
        bet_type: { kind: 'num_bets', value: 3 },
        winning_split_bps: [5000, 3000, 2000],
      }),
    );
    const id = contest.contest_id;
    const created = await protocolBalance();
    const users = await book.fundedUsers(5, 3 * BET);
    const [a, b, c, d, e] = users as [TestUser, TestUser, TestUser, TestUser, TestUser];
    // m1 YES, m2 NO, m3 VOID: A 2 wins, B 2, C 1, D 0, E 1.
    await enterAll(id, [
      [a, [up(m1), down(m2), up(m3)]],
      [b, [up(m1), down(m2), down(m3)]],
      [c, [up(m1), up(m2), up(m3)]],
      [d, [down(m1), up(m2), up(m3)]],
      [e, [down(m1), down(m2), down(m3)]],
    ]);

    await resolveMarket(server, m3, 'VOID');
    await resolveMarket(server, m2, 'NO');
    const midway = (await getDetail(server, id, c.token)).body;
    assert.equal(midway.status, 'open');
    assert.deepEqual(
      midway.caller.entries[0].picks.map((p: { outcome: string }) => p.outcome),
      ['pending', 'lost', 'voided'],
    );
    assert.equal(midway.caller.entries[0].open_leg_count, 1);
    assert.equal(midway.caller.entries[0].resolved_win_count, 0);
    assert.equal(midway.caller.entries[0].payout_micros, null);
    await book.check(); // nothing moves before the last market

    await resolveMarket(server, m1, 'YES');
    // pot 6_000_001. A, B share places 1-2: floor(pot × 0.8) = 4_800_000, 2_400_000 each. C, E share places
    // 3-4: pot − 4_800_000 = 1_200_001, 600_000 each; the odd micro is paid to nobody. D is 5th: nothing.
    const pot = pool + 5 * BET;
    const expected = [
      { payout: 2_400_000, rank: 1 },
      { payout: 2_400_000, rank: 1 },
      { payout: 600_000, rank: 3 },
      { payout: 0, rank: 5 },
      { payout: 600_000, rank: 3 },
    ];
    assert.deepEqual(
      await results(id, users),
      expected.map((x) => ({ ...x, net: x.payout - BET })),
    );
    users.forEach((u, i) => book.settled(u, BET, expected[i]!.payout));
    // The split sums to 10000, so all of the pot but the tie's rounding micro is paid, and that micro goes
    // back to the protocol: the users together gain the protocol pool less 1.
    assert.equal(
      expected.reduce((s, x) => s + x.payout, 0),
      pot - 1,
    );
    assert.equal(
      expected.reduce((s, x) => s + (x.payout - BET), 0),
      pool - 1,
    );
    await assertReturnedToProtocol(created, pool, 1);

    const detail = (await getDetail(server, id, c.token)).body;
    assert.equal(detail.status, 'resolved');
    assert.equal(typeof detail.resolved_at_ms, 'number');
    assert.equal(detail.total_pot_micros, pot);
    assert.deepEqual(
      detail.markets.map((m: { status: string; outcome: string | null }) => [m.status, m.outcome]),
      [
        ['RESOLVED', 'YES'],
        ['RESOLVED', 'NO'],
        ['VOIDED', null],
      ],
    );
    assert.deepEqual(detail.caller.entries[0], {
      entry_index: 0,
      created_at_ms: detail.caller.entries[0].created_at_ms,
      picks: [
        { market_id: m1, direction: 'up', outcome: 'won' },
        { market_id: m2, direction: 'up', outcome: 'lost' },
        { market_id: m3, direction: 'up', outcome: 'voided' },
      ],
      open_leg_count: 0,
      resolved_win_count: 1,
      payout_micros: 600_000,
      net_payout_micros: -400_000,
      rank: 3,
    });
    assertApiError(await enter(server, a, id, [up(m1), down(m2), up(m3)]), 422, 'CONTEST_CLOSED');
  });
});

describe('outcast', () => {
  it('the entries whose non-voided picks all won split the pot', async () => {
    const markets = await createMarkets(server, 3);
    const [m1, m2, m3] = markets as [number, number, number];
    const contest = await createContest(
      server,
      contestConfig(markets, {
        game_type: 'outcast',
        winning_split_bps: [],
        protocol_prize_pool_micros: 1,
        bet_type: { kind: 'num_bets', value: 2 },
      }),
    );
    const users = await book.fundedUsers(4, BET);
    const [a, b, c, d] = users as [TestUser, TestUser, TestUser, TestUser];
    await enterAll(contest.contest_id, [
      [a, [up(m1), down(m2)]], // won, won
      [b, [up(m1), up(m3)]], // won, voided: still clean
      [c, [up(m1), up(m2)]], // won, lost
      [d, [down(m1), down(m3)]], // lost, voided
    ]);
    await resolveMarket(server, m1, 'YES');
    await resolveMarket(server, m2, 'NO');
    await resolveMarket(server, m3, 'VOID');
    // pot 4_000_001 between A and B, 2_000_000 each; the odd micro is paid to nobody.
    const expected = [2_000_000, 2_000_000, 0, 0];
    assert.deepEqual(await results(contest.contest_id, users), [
      { payout: 2_000_000, net: 1_000_000, rank: 1 },
      { payout: 2_000_000, net: 1_000_000, rank: 1 },
      { payout: 0, net: -BET, rank: 3 },
      { payout: 0, net: -BET, rank: 4 },
    ]);
    users.forEach((u, i) => book.settled(u, BET, expected[i]!));
  });

  it('with no clean entry, the entries with the most wins split the pot', async () => {
    const markets = await createMarkets(server, 2);
    const [m1, m2] = markets as [number, number];
    const contest = await createContest(
      server,
      contestConfig(markets, {
        game_type: 'outcast',
        winning_split_bps: [],
        bet_type: { kind: 'num_bets', value: 2 },
      }),
    );
    const users = await book.fundedUsers(3, BET);
    const [x, y, z] = users as [TestUser, TestUser, TestUser];
    await enterAll(contest.contest_id, [
      [x, [up(m1), up(m2)]],
      [y, [down(m1), down(m2)]],
      [z, [down(m1), up(m2)]],
    ]);
    await resolveMarket(server, m1, 'YES');
    await resolveMarket(server, m2, 'NO');
    assert.deepEqual(await results(contest.contest_id, users), [
      { payout: 1_500_000, net: 500_000, rank: 1 },
      { payout: 1_500_000, net: 500_000, rank: 1 },
      { payout: 0, net: -BET, rank: 3 },
    ]);
    [1_500_000, 1_500_000, 0].forEach((p, i) => book.settled(users[i]!, BET, p));
  });
  it('three winners of a pot not divisible by 3 get floor(pot / 3) each; the remainder goes back to the protocol', async () => {
    const [m1] = (await createMarkets(server, 1)) as [number];
    const pool = 7;
    const contest = await createContest(
      server,
      contestConfig([m1], { game_type: 'outcast', winning_split_bps: [], protocol_prize_pool_micros: pool }),
    );
    const created = await protocolBalance();
    const users = await book.fundedUsers(4, BET);
    const [a, b, c, d] = users as [TestUser, TestUser, TestUser, TestUser];
    await enterAll(contest.contest_id, [
      [a, [up(m1)]],
      [b, [up(m1)]],
      [c, [up(m1)]],
      [d, [down(m1)]],
    ]);
    await resolveMarket(server, m1, 'YES');
    // pot 7 + 4 × 1_000_000 = 4_000_007 among A, B, C: 1_333_335 each (4_000_005), 2 micros paid to nobody.
    assert.deepEqual(await results(contest.contest_id, users), [
      { payout: 1_333_335, net: 333_335, rank: 1 },
      { payout: 1_333_335, net: 333_335, rank: 1 },
      { payout: 1_333_335, net: 333_335, rank: 1 },
      { payout: 0, net: -BET, rank: 4 },
    ]);
    [1_333_335, 1_333_335, 1_333_335, 0].forEach((p, i) => book.settled(users[i]!, BET, p));
    await assertReturnedToProtocol(created, pool, 2);
  });

  it('an entry whose picks were all voided has no lost pick: it takes the pot from an entry that lost', async () => {
    // A's non-voided picks (none) all won.
    const { contestId, a, m1 } = await allVoidedAgainstALoser('outcast');
    const detail = (await getDetail(server, contestId, a.token)).body;
    assert.equal(detail.status, 'resolved');
    assert.equal(detail.total_pot_micros, 2_000_000);
    assert.deepEqual(detail.caller.entries[0].picks, [{ market_id: m1, direction: 'up', outcome: 'voided' }]);
    assert.equal(detail.caller.entries[0].resolved_win_count, 0);
  });

  it('an all-voided entry wins over an entry with one win and one loss', async () => {
    const markets = await createMarkets(server, 4);
    const [m1, m2, m3, m4] = markets as [number, number, number, number];
    const contest = await createContest(
      server,
      contestConfig(markets, {
        game_type: 'outcast',
        winning_split_bps: [],
        protocol_prize_pool_micros: 1,
        bet_type: { kind: 'num_bets', value: 2 },
      }),
    );
    const users = await book.fundedUsers(3, BET);
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    await enterAll(contest.contest_id, [
      [a, [up(m1), up(m3)]], // voided, voided: clean, 0 wins
      [b, [down(m2), up(m4)]], // won, lost: 1 win
      [c, [up(m2), up(m4)]], // lost, lost: 0 wins
    ]);
    await resolveMarket(server, m1, 'VOID');
    await resolveMarket(server, m3, 'VOID');
    await resolveMarket(server, m2, 'NO');
    await resolveMarket(server, m4, 'NO');
    // pot 1 + 3 × 1_000_000 = 3_000_001, all to A. B ranks 2nd (1 win), C 3rd (0 wins).
    const expected = [3_000_001, 0, 0];
    assert.deepEqual(await results(contest.contest_id, users), [
      { payout: 3_000_001, net: 2_000_001, rank: 1 },
      { payout: 0, net: -BET, rank: 2 },
      { payout: 0, net: -BET, rank: 3 },
    ]);
    users.forEach((u, i) => book.settled(u, BET, expected[i]!));
    assert.equal(
      expected.reduce((sum, x) => sum + x, 0),
      1 + 3 * BET,
    ); // the whole pot, exactly
  });
});

describe('survivor', () => {
  it('eliminates an entry at its first lost pick; the entries never eliminated split the pot', async () => {
    const markets = await createMarkets(server, 3);
    const [m1, m2, m3] = markets as [number, number, number];
    const contest = await createContest(
      server,
      contestConfig(markets, {
        game_type: 'survivor',
        winning_split_bps: [],
        protocol_prize_pool_micros: 500_000,
      }),
    );
    const id = contest.contest_id;
    const users = await book.fundedUsers(4, BET);
    const [a, b, c, d] = users as [TestUser, TestUser, TestUser, TestUser];
    await enterAll(id, [
      [a, [up(m1)]],
      [b, [up(m1)]],
      [c, [down(m1)]],
      [d, [up(m1)]],
    ]);
    await continueEntry(a, id, 0, [up(m2)]);
    await continueEntry(b, id, 0, [down(m2)]);
    await continueEntry(d, id, 0, [up(m2)]);

    await resolveMarket(server, m1, 'YES');
    assertApiError(await enter(server, c, id, [up(m2)], 0), 422, 'ENTRY_ELIMINATED');
    await continueEntry(a, id, 0, [up(m3)]);
    await resolveMarket(server, m2, 'YES');
    assertApiError(await enter(server, b, id, [up(m3)], 0), 422, 'ENTRY_ELIMINATED');
    await continueEntry(d, id, 0, [down(m3)]);
    await resolveMarket(server, m3, 'VOID');

    // A [won, won, voided] and D [won, won, voided] survive: pot 4_500_000 halves. B has 1 win, C none.
    assert.deepEqual(await results(id, users), [
      { payout: 2_250_000, net: 1_250_000, rank: 1 },
      { payout: 0, net: -BET, rank: 3 },
      { payout: 0, net: -BET, rank: 4 },
      { payout: 2_250_000, net: 1_250_000, rank: 1 },
    ]);
    [2_250_000, 0, 0, 2_250_000].forEach((p, i) => book.settled(users[i]!, BET, p));
  });
  it('an entry whose picks were all voided was never eliminated: it takes the pot from an entry that lost', async () => {
    await allVoidedAgainstALoser('survivor'); // B lost, so was eliminated; A never was
  });

  it('with no survivor nobody is paid: ranks still follow wins, and the whole pot goes back to the protocol', async () => {
    const [m1, m2] = (await createMarkets(server, 2)) as [number, number];
    const pool = 500_000;
    const contest = await createContest(
      server,
      contestConfig([m1, m2], { game_type: 'survivor', winning_split_bps: [], protocol_prize_pool_micros: pool }),
    );
    const id = contest.contest_id;
    const created = await protocolBalance();
    const users = await book.fundedUsers(3, BET);
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    await enterAll(id, [
      [a, [up(m1)]],
      [b, [down(m1)]],
      [c, [up(m1)]],
    ]);
    await resolveMarket(server, m1, 'NO'); // A and C lost; B won
    await continueEntry(b, id, 0, [up(m2)]);
    await resolveMarket(server, m2, 'NO'); // B lost its second pick: every entry was eliminated
    assert.deepEqual(await results(id, users), [
      { payout: 0, net: -BET, rank: 2 },
      { payout: 0, net: -BET, rank: 1 },
      { payout: 0, net: -BET, rank: 2 },
    ]);
    for (const u of users) book.settled(u, BET, 0);
    await assertReturnedToProtocol(created, pool, pool + 3 * BET);
    // The caller's own list shows it settled, its money as decimal strings (contract section 1).
    const history = await client(server.baseUrl, b.token).get(`/v1/user/contest_entries?contest_id=${id}`);
    assert.equal(history.status, 200, JSON.stringify(history.body));
    const [row] = history.body.entries;
    assert.deepEqual(
      { state: row.state, stake: row.stake_micros, payout: row.payout_micros, net: row.net_payout_micros, rank: row.rank },
      { state: 'settled', stake: String(BET), payout: '0', net: String(-BET), rank: 1 },
    );
  });

  it('an all-voided survivor wins over an entry eliminated after one win', async () => {
    const [m1, m2, m3] = (await createMarkets(server, 3)) as [number, number, number];
    const contest = await createContest(
      server,
      contestConfig([m1, m2, m3], {
        game_type: 'survivor',
        winning_split_bps: [],
        protocol_prize_pool_micros: 500_000,
      }),
    );
    const id = contest.contest_id;
    const users = await book.fundedUsers(3, BET);
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    await enterAll(id, [
      [a, [up(m1)]],
      [b, [up(m2)]],
      [c, [down(m2)]],
    ]);
    await resolveMarket(server, m2, 'NO'); // B lost, C won
    await continueEntry(c, id, 0, [up(m3)]);
    await resolveMarket(server, m3, 'NO'); // C lost its second pick
    await resolveMarket(server, m1, 'VOID');
    // A [voided] survives, C [won, lost] and B [lost] were eliminated. pot 500_000 + 3 × 1_000_000 to A;
    // C ranks 2nd (1 win), B 3rd (0 wins).
    const expected = [3_500_000, 0, 0];
    assert.deepEqual(await results(id, users), [
      { payout: 3_500_000, net: 2_500_000, rank: 1 },
      { payout: 0, net: -BET, rank: 3 },
      { payout: 0, net: -BET, rank: 2 },
    ]);
    users.forEach((u, i) => book.settled(u, BET, expected[i]!));
    assert.equal(
      expected.reduce((sum, x) => sum + x, 0),
      500_000 + 3 * BET,
    ); // the whole pot, exactly
    const entryOfC = (await adminEntries(server, id)).find((x) => x.user_id === c.userId)!;
    assert.deepEqual(
      entryOfC.picks.map((p) => p.outcome),
      ['won', 'lost'],
    );
  });
});

describe('streak', () => {
  it('continues entries round by round; the longest runs of consecutive wins split the pot', async () => {
    const markets = await createMarkets(server, 4);
    const [m1, m2, m3, m4] = markets as [number, number, number, number];
    const contest = await createContest(
      server,
      contestConfig(markets, {
        game_type: 'streak',
        winning_split_bps: [],
        protocol_prize_pool_micros: 1,
      }),
    );
    const id = contest.contest_id;
    const users = await book.fundedUsers(5, BET);
    const [a, b, c, d, e] = users as [TestUser, TestUser, TestUser, TestUser, TestUser];
    await enterAll(id, [
      [a, [up(m1)]],
      [b, [up(m1)]],
      [c, [down(m1)]],
      [d, [up(m1)]],
      [e, [up(m1)]],
    ]);
    await continueEntry(a, id, 0, [up(m2)]);
    await resolveMarket(server, m1, 'YES');
    assertApiError(await enter(server, c, id, [up(m3)], 0), 422, 'ENTRY_ELIMINATED');
    await continueEntry(a, id, 0, [up(m3)]);
    await continueEntry(b, id, 0, [up(m3)]);
    await continueEntry(d, id, 0, [down(m3)]);
    await continueEntry(e, id, 0, [up(m3)]);
    await resolveMarket(server, m2, 'VOID');
    await resolveMarket(server, m3, 'YES');
    assertApiError(await enter(server, d, id, [up(m4)], 0), 422, 'ENTRY_ELIMINATED');
    await continueEntry(a, id, 0, [up(m4)]);
    await continueEntry(b, id, 0, [down(m4)]);
    await continueEntry(e, id, 0, [down(m4)]);
    await resolveMarket(server, m4, 'NO');

    // Runs: A [W, V, W, L] = 2; B [W, W, W] = 3; C [L] = 0; D [W, L] = 1; E [W, W, W] = 3.
    // B and E split 5_000_001, 2_500_000 each; the odd micro is paid to nobody.
    assert.deepEqual(await results(id, users), [
      { payout: 0, net: -BET, rank: 3 },
      { payout: 2_500_000, net: 1_500_000, rank: 1 },
      { payout: 0, net: -BET, rank: 5 },
      { payout: 0, net: -BET, rank: 4 },
      { payout: 2_500_000, net: 1_500_000, rank: 1 },
    ]);
    [0, 2_500_000, 0, 0, 2_500_000].forEach((p, i) => book.settled(users[i]!, BET, p));
    const entries = await adminEntries(server, id);
    const entryOfA = entries.find((x) => x.user_id === a.userId)!;
    assert.deepEqual(
      entryOfA.picks.map((p) => p.outcome),
      ['won', 'voided', 'won', 'lost'],
    );
  });
});

describe('whole contests', () => {
  it('a contest whose markets all void is voided and refunds every entry', async () => {
    const markets = await createMarkets(server, 2);
    const contest = await createContest(server, contestConfig(markets, { protocol_prize_pool_micros: 3_000_000 }));
    const users = await book.fundedUsers(2, BET);
    await enterAll(contest.contest_id, [
      [users[0]!, [up(markets[0]!)]],
      [users[1]!, [down(markets[1]!)]],
    ]);
    await resolveMarket(server, markets[0]!, 'VOID');
    await resolveMarket(server, markets[1]!, 'VOID');
    const detail = (await getDetail(server, contest.contest_id, users[0]!.token)).body;
    assert.equal(detail.status, 'voided');
    assert.equal(detail.caller.entries[0].payout_micros, BET);
    assert.equal(detail.caller.entries[0].net_payout_micros, 0);
    for (const u of users) book.refunded(u, BET);
  });

  it('a contest nobody entered resolves and pays nothing', async () => {
    const markets = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig(markets, { protocol_prize_pool_micros: 9_000_000 }));
    await resolveMarket(server, markets[0]!, 'YES');
    const detail = (await getDetail(server, contest.contest_id)).body;
    assert.equal(detail.status, 'resolved');
    assert.equal(detail.entries_filled, 0);
    assert.equal(detail.total_pot_micros, 9_000_000);
  });

  it('a market shared by two contests resolves both; re-resolving it changes nothing', async () => {
    const markets = await createMarkets(server, 1);
    const first = await createContest(server, contestConfig(markets));
    const second = await createContest(server, contestConfig(markets, { game_type: 'outcast', winning_split_bps: [] }));
    const [u] = await book.fundedUsers(1, 2 * BET);
    const res1 = await enter(server, u!, first.contest_id, [up(markets[0]!)]);
    const res2 = await enter(server, u!, second.contest_id, [down(markets[0]!)]);
    assert.deepEqual([res1.status, res2.status], [201, 201]);
    book.staked(u!, 2 * BET);
    await resolveMarket(server, markets[0]!, 'YES');
    await resolveMarket(server, markets[0]!, 'YES');
    // first: the only entry takes all of 1_000_000. second: its only entry lost, yet has the most wins (0).
    book.settled(u!, BET, BET);
    book.settled(u!, BET, BET);
    assert.equal((await getDetail(server, first.contest_id)).body.status, 'resolved');
    assert.equal((await getDetail(server, second.contest_id)).body.status, 'resolved');
  });
});
