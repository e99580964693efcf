// Racing entries against the real server (contract section 8: "entry_cap is never exceeded, however many
// entries race"). The contest actor decides one entry at a time, so the outcome of a race is exact.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { adminEntries, contestConfig, createContest, down, enter, getDetail, MoneyBook, up } from '../helpers/contests.js';
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

describe('concurrent entries', () => {
  it('50 users racing for 10 places: exactly 10 are accepted, the others get CONTEST_FULL, balances exact', async () => {
    const markets = await createMarkets(server, 1);
    const pool = 2_000_000;
    const contest = await createContest(
      server,
      contestConfig(markets, {
        entry_cap: 10,
        protocol_prize_pool_micros: pool,
        game_type: 'outcast',
        winning_split_bps: [],
      }),
    );
    const users = await book.fundedUsers(50, 3 * BET);
    const responses = await Promise.all(
      users.map((u, i) => enter(server, u, contest.contest_id, [i % 2 === 0 ? up(markets[0]!) : down(markets[0]!)])),
    );
    const accepted = users.filter((_, i) => responses[i]!.status === 201);
    assert.equal(accepted.length, 10);
    for (const res of responses) {
      if (res.status === 201) {
        assert.deepEqual(res.body, { contest_id: contest.contest_id, entry_index: 0, reserved_micros: String(BET) });
      } else {
        assert.equal(res.status, 409, JSON.stringify(res.body));
        assert.equal(res.body.code, 'CONTEST_FULL');
      }
    }
    for (const u of accepted) book.staked(u, BET);
    const detail = (await getDetail(server, contest.contest_id)).body;
    assert.equal(detail.entries_filled, 10);
    assert.equal(detail.total_pot_micros, pool + 10 * BET);
    await book.check();

    await resolveMarket(server, markets[0]!, 'YES');
    const entries = await adminEntries(server, contest.contest_id);
    assert.equal(entries.length, 10);
    // Up won. The winners (or, if every accepted entry picked down, all of them) split the pot, rounded down.
    const winners = entries.filter((e) => e.picks[0]!.outcome === 'won').length;
    const shareMicros = Math.floor((pool + 10 * BET) / (winners || 10));
    for (const e of entries) {
      const user = accepted.find((u) => u.userId === e.user_id)!;
      const isWinner = e.picks[0]!.outcome === 'won' || winners === 0;
      assert.equal(e.rank, isWinner ? 1 : 1 + winners);
      assert.equal(e.payout_micros, isWinner ? shareMicros : 0);
      book.settled(user, BET, e.payout_micros!);
    }
  });

  it('one user firing 30 entries at once gets entry_index 0..29, each reserved once', async () => {
    const markets = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig(markets));
    const user = await book.fundedUser(40 * BET);
    const responses = await Promise.all(Array.from({ length: 30 }, () => enter(server, user, contest.contest_id, [up(markets[0]!)])));
    assert.ok(responses.every((r) => r.status === 201));
    assert.deepEqual(
      responses.map((r) => r.body.entry_index).sort((a, b) => a - b),
      Array.from({ length: 30 }, (_, i) => i),
    );
    book.staked(user, 30 * BET);
    const detail = (await getDetail(server, contest.contest_id, user.token)).body;
    assert.equal(detail.entries_filled, 30);
    assert.deepEqual(
      detail.caller.entries.map((e: { entry_index: number }) => e.entry_index),
      Array.from({ length: 30 }, (_, i) => i),
    );
  });

  it('racing entries beyond the balance: exactly as many as the balance covers are accepted', async () => {
    const markets = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig(markets));
    const user = await book.fundedUser(5 * BET + 999_999);
    const responses = await Promise.all(Array.from({ length: 12 }, () => enter(server, user, contest.contest_id, [up(markets[0]!)])));
    assert.equal(responses.filter((r) => r.status === 201).length, 5);
    assert.ok(responses.filter((r) => r.status !== 201).every((r) => r.status === 422 && r.body.code === 'INSUFFICIENT_BALANCE'));
    book.staked(user, 5 * BET);
    assert.equal((await getDetail(server, contest.contest_id)).body.entries_filled, 5);
  });

  it('entries racing the last market resolution are either refused or settled, never left reserved', async () => {
    const markets = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig(markets, { winning_split_bps: [7000, 3000] }));
    const users = await book.fundedUsers(20, BET);
    const racing = users.map((u) => enter(server, u, contest.contest_id, [up(markets[0]!)]));
    await new Promise((r) => setTimeout(r, 5));
    await resolveMarket(server, markets[0]!, 'YES');
    const responses = await Promise.all(racing);
    for (const res of responses) {
      if (res.status !== 201) assert.equal(res.body.code, 'MARKET_NOT_OPEN', JSON.stringify(res.body));
    }
    const detail = (await getDetail(server, contest.contest_id)).body;
    assert.equal(detail.status, 'resolved');
    const entries = await adminEntries(server, contest.contest_id);
    assert.equal(entries.length, responses.filter((r) => r.status === 201).length);
    assert.equal(detail.entries_filled, entries.length);
    for (const e of entries) {
      assert.notEqual(e.payout_micros, null);
      book.staked(
        users.find((u) => u.userId === e.user_id)!,
        BET,
      );
      book.settled(
        users.find((u) => u.userId === e.user_id)!,
        BET,
        e.payout_micros!,
      );
    }
    assert.ok(entries.reduce((s, e) => s + e.payout_micros!, 0) <= detail.total_pot_micros);
  });
});
