// POST /v1/user/contest_bet against the real server (contract section 8): every check with its error code,
// entry_index allocation, survivor/streak continuation, and exact balances after every test.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { client } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { adminEntries, contestConfig, createContest, down, enter, getDetail, MoneyBook, up } from '../helpers/contests.js';
import { assertApiError } from '../helpers/errors.js';
import { createMarket, createMarkets, resolveMarket } from '../helpers/markets.js';

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

async function entered(
  res: Awaited<ReturnType<typeof enter>>,
  user: Parameters<MoneyBook['staked']>[0],
  contestId: string,
  entryIndex: number,
) {
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.deepEqual(res.body, { contest_id: contestId, entry_index: entryIndex, reserved_micros: String(BET) });
  book.staked(user, BET);
}

describe('bet_type num_bets', () => {
  it('accepts exactly value picks (201, reserves bet_amount_micros) and refuses any other count with INVALID_PICKS', async () => {
    const markets = await createMarkets(server, 4);
    const contest = await createContest(server, contestConfig(markets, { bet_type: { kind: 'num_bets', value: 2 } }));
    const user = await book.fundedUser(10 * BET);
    assertApiError(await enter(server, user, contest.contest_id, [up(markets[0]!)]), 422, 'INVALID_PICKS');
    assertApiError(
      await enter(server, user, contest.contest_id, [up(markets[0]!), down(markets[1]!), up(markets[2]!)]),
      422,
      'INVALID_PICKS',
    );
    await entered(await enter(server, user, contest.contest_id, [up(markets[0]!), down(markets[3]!)]), user, contest.contest_id, 0);
    const detail = (await getDetail(server, contest.contest_id, user.token)).body;
    assert.equal(detail.entries_filled, 1);
    assert.equal(detail.total_pot_micros, BET);
    assert.deepEqual(detail.caller.entries[0].picks, [
      { market_id: markets[0], direction: 'up', outcome: 'pending' },
      { market_id: markets[3], direction: 'down', outcome: 'pending' },
    ]);
  });
});

describe('bet_type bets_per_category', () => {
  it('needs exactly value picks in each category of the contest', async () => {
    const markets = await createMarkets(server, 5);
    const categories = ['politics', 'politics', 'tech', 'tech', 'tech'];
    const contest = await createContest(
      server,
      contestConfig(markets, {
        bet_type: { kind: 'bets_per_category', value: 2 },
        markets: markets.map((market_id, i) => ({ market_id, category: categories[i]! })),
      }),
    );
    const user = await book.fundedUser(10 * BET);
    const id = contest.contest_id;
    // A category missing altogether.
    assertApiError(await enter(server, user, id, [up(markets[2]!), up(markets[3]!)]), 422, 'INVALID_PICKS');
    // Right total, wrong distribution.
    assertApiError(
      await enter(server, user, id, [up(markets[0]!), up(markets[2]!), up(markets[3]!), up(markets[4]!)]),
      422,
      'INVALID_PICKS',
    );
    // One short in a category.
    assertApiError(await enter(server, user, id, [up(markets[0]!), up(markets[1]!), up(markets[2]!)]), 422, 'INVALID_PICKS');
    await entered(await enter(server, user, id, [up(markets[0]!), down(markets[1]!), up(markets[2]!), down(markets[4]!)]), user, id, 0);
  });
});

describe('pick checks', () => {
  it('refuses the same market twice with DUPLICATE_MARKET', async () => {
    const markets = await createMarkets(server, 2);
    const contest = await createContest(server, contestConfig(markets, { bet_type: { kind: 'num_bets', value: 2 } }));
    const user = await book.fundedUser(BET);
    assertApiError(await enter(server, user, contest.contest_id, [up(markets[0]!), down(markets[0]!)]), 422, 'DUPLICATE_MARKET');
  });

  it('refuses a market that is not in the contest with INVALID_PICKS, existing elsewhere or not at all', async () => {
    const markets = await createMarkets(server, 2);
    const outsider = await createMarket(server, 'outsider');
    const contest = await createContest(server, contestConfig(markets));
    const user = await book.fundedUser(BET);
    assertApiError(await enter(server, user, contest.contest_id, [up(outsider.market_id)]), 422, 'INVALID_PICKS');
    assertApiError(await enter(server, user, contest.contest_id, [up(987_654)]), 422, 'INVALID_PICKS');
  });

  it('refuses a contest market that is no longer OPEN with MARKET_NOT_OPEN', async () => {
    const markets = await createMarkets(server, 2);
    const contest = await createContest(server, contestConfig(markets));
    await resolveMarket(server, markets[0]!, 'YES');
    const user = await book.fundedUser(BET);
    assertApiError(await enter(server, user, contest.contest_id, [up(markets[0]!)]), 422, 'MARKET_NOT_OPEN');
    await entered(await enter(server, user, contest.contest_id, [up(markets[1]!)]), user, contest.contest_id, 0);
  });

  it('refuses a malformed body with 400 and a missing bearer with 401', async () => {
    const markets = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig(markets));
    const user = await book.fundedUser(BET);
    const api = client(server.baseUrl, user.token);
    for (const body of [
      { contest_id: contest.contest_id, bets: [{ market_id: markets[0], direction: 'sideways' }] },
      { contest_id: contest.contest_id, bets: [up(markets[0]!)], entry_index: -1 },
      { contest_id: contest.contest_id, bets: [up(markets[0]!)], stake: 1 },
      { contest_id: 'nope', bets: [up(markets[0]!)] },
    ]) {
      assertApiError(await api.post('/v1/user/contest_bet', body), 400, 'VALIDATION_FAILED');
    }
    assertApiError(
      await client(server.baseUrl).post('/v1/user/contest_bet', { contest_id: contest.contest_id, bets: [up(markets[0]!)] }),
      401,
      'UNAUTHENTICATED',
    );
    assertApiError(await enter(server, user, '00000000-0000-4000-8000-000000000000', [up(markets[0]!)]), 404, 'CONTEST_NOT_FOUND');
  });

  it('an empty list of picks, or more than bet_type allows, is INVALID_PICKS (422) with nothing reserved', async () => {
    const markets = await createMarkets(server, 3);
    const outsider = await createMarket(server, 'outsider');
    const contest = await createContest(server, contestConfig(markets, { bet_type: { kind: 'num_bets', value: 2 } }));
    const user = await book.fundedUser(BET);
    const id = contest.contest_id;
    assertApiError(await enter(server, user, id, []), 422, 'INVALID_PICKS');
    // More than the 64 picks a contest can take: a count the rule refuses, checked before duplicates.
    const tooMany = Array.from({ length: 65 }, (_, i) => up(i < 3 ? markets[i]! : outsider.market_id));
    assertApiError(await enter(server, user, id, tooMany), 422, 'INVALID_PICKS');
    assertApiError(await enter(server, user, id, [up(markets[0]!), up(markets[1]!), up(markets[1]!)]), 422, 'INVALID_PICKS');
    const detail = (await getDetail(server, id, user.token)).body;
    assert.equal(detail.entries_filled, 0);
    assert.deepEqual(detail.caller, { joined: false, entries: [] });
    // The body's own bound (CONTEST_LIMITS.maxBodyPicks, 1024) stays a malformed body.
    const pastTheBodyBound = Array.from({ length: 1025 }, () => up(markets[0]!));
    assertApiError(await enter(server, user, id, pastTheBodyBound), 400, 'VALIDATION_FAILED');
  });

  it('an empty list of picks in bets_per_category, new or continued, is INVALID_PICKS (422)', async () => {
    const markets = await createMarkets(server, 2);
    const contest = await createContest(
      server,
      contestConfig(markets, {
        game_type: 'survivor',
        winning_split_bps: [],
        bet_type: { kind: 'bets_per_category', value: 1 },
        markets: markets.map((market_id, i) => ({ market_id, category: `round ${i}` })),
      }),
    );
    const user = await book.fundedUser(BET);
    const id = contest.contest_id;
    assertApiError(await enter(server, user, id, []), 422, 'INVALID_PICKS');
    assertApiError(await enter(server, user, id, [up(markets[0]!), up(markets[1]!), down(markets[0]!)]), 422, 'INVALID_PICKS');
    await entered(await enter(server, user, id, [up(markets[0]!), up(markets[1]!)]), user, id, 0);
    assertApiError(await enter(server, user, id, [], 0), 422, 'INVALID_PICKS');
  });

  it('refuses an entry the available balance cannot cover with INSUFFICIENT_BALANCE, reserving nothing', async () => {
    const markets = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig(markets));
    const user = await book.fundedUser(BET - 1);
    assertApiError(await enter(server, user, contest.contest_id, [up(markets[0]!)]), 422, 'INSUFFICIENT_BALANCE');
    const detail = (await getDetail(server, contest.contest_id, user.token)).body;
    assert.equal(detail.entries_filled, 0);
    assert.deepEqual(detail.caller, { joined: false, entries: [] });
  });
});

describe('time windows', () => {
  it('is CONTEST_CLOSED before entry_opens_at_ms and after betting_closes_ms', async () => {
    const markets = await createMarkets(server, 1);
    const notYet = await createContest(
      server,
      contestConfig(markets, {
        entry_opens_at_ms: Date.now() + 600_000,
        betting_closes_ms: Date.now() + 3_600_000,
      }),
    );
    const closesMs = Date.now() + 1_500;
    const closing = await createContest(server, contestConfig(markets, { betting_closes_ms: closesMs }));
    const user = await book.fundedUser(5 * BET);
    assertApiError(await enter(server, user, notYet.contest_id, [up(markets[0]!)]), 422, 'CONTEST_CLOSED');
    await entered(await enter(server, user, closing.contest_id, [up(markets[0]!)]), user, closing.contest_id, 0);
    await new Promise((r) => setTimeout(r, Math.max(0, closesMs - Date.now()) + 100));
    assertApiError(await enter(server, user, closing.contest_id, [up(markets[0]!)]), 422, 'CONTEST_CLOSED');
    assert.equal((await getDetail(server, closing.contest_id)).body.entries_filled, 1);
  });

  it('a pick whose own market betting has closed is MARKET_NOT_OPEN', async () => {
    const closesMs = Date.now() + 1_500;
    const shortMarket = await createMarket(server, 'short', closesMs);
    const [longMarket] = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig([shortMarket.market_id, longMarket!]));
    const user = await book.fundedUser(BET);
    await new Promise((r) => setTimeout(r, Math.max(0, closesMs - Date.now()) + 100));
    assertApiError(await enter(server, user, contest.contest_id, [up(shortMarket.market_id)]), 422, 'MARKET_NOT_OPEN');
  });
});

describe('entry_index', () => {
  it('is allocated per user per contest, starting at 0', async () => {
    const markets = await createMarkets(server, 2);
    const first = await createContest(server, contestConfig(markets));
    const second = await createContest(server, contestConfig(markets));
    const [alice, bob] = [await book.fundedUser(10 * BET), await book.fundedUser(10 * BET)];
    await entered(await enter(server, alice!, first.contest_id, [up(markets[0]!)]), alice!, first.contest_id, 0);
    await entered(await enter(server, alice!, first.contest_id, [down(markets[0]!)]), alice!, first.contest_id, 1);
    await entered(await enter(server, bob!, first.contest_id, [up(markets[1]!)]), bob!, first.contest_id, 0);
    await entered(await enter(server, alice!, second.contest_id, [up(markets[1]!)]), alice!, second.contest_id, 0);
    await entered(await enter(server, alice!, first.contest_id, [up(markets[1]!)]), alice!, first.contest_id, 2);
    const detail = (await getDetail(server, first.contest_id, alice!.token)).body;
    assert.equal(detail.entries_filled, 4);
    assert.equal(detail.total_pot_micros, 4 * BET);
    assert.deepEqual(
      detail.caller.entries.map((e: { entry_index: number }) => e.entry_index),
      [0, 1, 2],
    );
  });

  it('cannot continue a lineups or outcast entry: ENTRY_NOT_FOUND', async () => {
    const markets = await createMarkets(server, 2);
    const contest = await createContest(server, contestConfig(markets));
    const user = await book.fundedUser(BET);
    await entered(await enter(server, user, contest.contest_id, [up(markets[0]!)]), user, contest.contest_id, 0);
    assertApiError(await enter(server, user, contest.contest_id, [up(markets[1]!)], 0), 422, 'ENTRY_NOT_FOUND');
  });
});

for (const gameType of ['survivor', 'streak'] as const) {
  describe(`${gameType} continuation`, () => {
    it('continues an entry by entry_index (200, reserves "0"), refuses unknown, foreign and eliminated entries', async () => {
      const markets = await createMarkets(server, 4);
      const contest = await createContest(server, contestConfig(markets, { game_type: gameType, winning_split_bps: [] }));
      const id = contest.contest_id;
      const [alice, bob] = [await book.fundedUser(5 * BET), await book.fundedUser(5 * BET)];
      await entered(await enter(server, alice!, id, [up(markets[0]!)]), alice!, id, 0);
      await entered(await enter(server, alice!, id, [down(markets[0]!)]), alice!, id, 1);

      const continued = await enter(server, alice!, id, [up(markets[1]!)], 0);
      assert.equal(continued.status, 200, JSON.stringify(continued.body));
      assert.deepEqual(continued.body, { contest_id: id, entry_index: 0, reserved_micros: '0' });

      assertApiError(await enter(server, alice!, id, [up(markets[2]!)], 2), 422, 'ENTRY_NOT_FOUND');
      assertApiError(await enter(server, bob!, id, [up(markets[2]!)], 0), 422, 'ENTRY_NOT_FOUND');
      assertApiError(await enter(server, alice!, id, [down(markets[1]!)], 0), 422, 'DUPLICATE_MARKET');
      assertApiError(await enter(server, alice!, id, [up(markets[2]!), up(markets[3]!)], 0), 422, 'INVALID_PICKS');

      // markets[0] resolves NO: entry 0 (up) is eliminated, entry 1 (down) lives on.
      await resolveMarket(server, markets[0]!, 'NO');
      assertApiError(await enter(server, alice!, id, [up(markets[2]!)], 0), 422, 'ENTRY_ELIMINATED');
      const alive = await enter(server, alice!, id, [up(markets[2]!)], 1);
      assert.equal(alive.status, 200, JSON.stringify(alive.body));
      assert.deepEqual(alive.body, { contest_id: id, entry_index: 1, reserved_micros: '0' });

      const entries = await adminEntries(server, id);
      assert.deepEqual(
        entries.map((e) => [e.entry_index, e.picks.map((p) => `${p.market_id}:${p.direction}:${p.outcome}`)]),
        [
          [0, [`${markets[0]}:up:lost`, `${markets[1]}:up:pending`]],
          [1, [`${markets[0]}:down:won`, `${markets[2]}:up:pending`]],
        ],
      );
      assert.deepEqual(
        entries.map((e) => [e.open_leg_count, e.resolved_win_count]),
        [
          [1, 0],
          [1, 1],
        ],
      );
      // Continuations reserve nothing: two entries, two bet amounts.
      assertApiError(await getDetail(server, id, alice!.token), 404, 'CONTEST_NOT_FOUND');
      const listed = (await client(server.baseUrl).get('/v1/contests')).body.contests.find(
        (c: { contest_id: string }) => c.contest_id === id,
      );
      assert.equal(listed.entries_filled, 2);
      assert.equal(listed.total_pot_micros, 2 * BET);
    });
  });
}
