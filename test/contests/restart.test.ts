// Contests across restarts and crashes (docs/contests.md): an entry and its reservation are one LMDB
// transaction, so a kill -9 leaves both or neither; a contest whose markets all became final while the
// process was down is resolved at start.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import type { TestUser } from '../helpers/users.js';
import { adminEntries, contestConfig, createContest, down, enter, getDetail, MoneyBook, up } from '../helpers/contests.js';
import { createMarkets, resolveMarket } from '../helpers/markets.js';
import { resolveMarketsWhileStopped } from '../helpers/store-writes.js';
import { waitFor } from '../helpers/wait.js';

const BET = 1_000_000;
const servers: TestServer[] = [];

after(async () => {
  for (const s of servers) {
    await s.kill();
    removeDataDir(s);
  }
});

async function start(previous?: TestServer): Promise<TestServer> {
  const server = previous === undefined ? await startServer() : await restartServer(previous);
  servers.push(server);
  return server;
}

describe('restarts', () => {
  it('entries made before a kill -9 are resolved after the restart, with exact balances', async () => {
    let server = await start();
    let book = new MoneyBook(server);
    const markets = await createMarkets(server, 2);
    const contest = await createContest(
      server,
      contestConfig(markets, {
        bet_type: { kind: 'num_bets', value: 2 },
        winning_split_bps: [6000, 4000],
        protocol_prize_pool_micros: 1_000_000,
      }),
    );
    const users = await book.fundedUsers(3, 2 * BET);
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    for (const [user, picks] of [
      [a, [up(markets[0]!), up(markets[1]!)]],
      [b, [up(markets[0]!), down(markets[1]!)]],
      [c, [down(markets[0]!), down(markets[1]!)]],
    ] as const) {
      const res = await enter(server, user, contest.contest_id, [...picks]);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      book.staked(user, BET);
    }
    await server.kill();

    server = await start(server);
    book = book.rebind(server);
    await book.check();
    const before = (await getDetail(server, contest.contest_id, a.token)).body;
    assert.equal(before.entries_filled, 3);
    assert.equal(before.total_pot_micros, 4_000_000);
    assert.equal(before.caller.entries.length, 1);
    // Entering again after the restart continues the index sequence.
    const again = await enter(server, a, contest.contest_id, [down(markets[0]!), up(markets[1]!)]);
    assert.equal(again.status, 201);
    assert.equal(again.body.entry_index, 1);
    book.staked(a, BET);

    await resolveMarket(server, markets[0]!, 'YES');
    await resolveMarket(server, markets[1]!, 'YES');
    // Wins: A#0 2, B 1, C 0, A#1 1. Pot 5_000_000: A#0 first (3_000_000); B and A#1 share 2nd-3rd
    // (2_000_000, 1_000_000 each); C 4th: nothing.
    const entries = await adminEntries(server, contest.contest_id);
    const byKey = new Map(entries.map((e) => [`${e.user_id}:${e.entry_index}`, e]));
    assert.deepEqual(
      [
        [a, 0],
        [b, 0],
        [c, 0],
        [a, 1],
      ].map(([u, i]) => {
        const e = byKey.get(`${(u as TestUser).userId}:${i}`)!;
        return [e.payout_micros, e.rank];
      }),
      [
        [3_000_000, 1],
        [1_000_000, 2],
        [0, 4],
        [1_000_000, 2],
      ],
    );
    book.settled(a, BET, 3_000_000);
    book.settled(b, BET, 1_000_000);
    book.settled(c, BET, 0);
    book.settled(a, BET, 1_000_000);
    await book.check();
  });

  it('a kill -9 in the middle of racing entries leaves every entry with its reservation and nothing else', async () => {
    let server = await start();
    let book = new MoneyBook(server);
    const markets = await createMarkets(server, 1);
    const contest = await createContest(server, contestConfig(markets, { entry_cap: 25 }));
    const users = await book.fundedUsers(40, 2 * BET);
    const acknowledged: TestUser[] = [];
    const racing = users.map((u) =>
      enter(server, u, contest.contest_id, [up(markets[0]!)]).then(
        (res) => {
          if (res.status === 201) acknowledged.push(u);
        },
        () => undefined, // the connection died with the process
      ),
    );
    // Kill once the first entries are durable, while the rest are in flight.
    await waitFor(() => acknowledged.length >= 3, { timeoutMs: 10_000, intervalMs: 1, what: 'three entries acknowledged' });
    await server.kill();
    await Promise.all(racing);

    server = await start(server);
    book = book.rebind(server);
    const entries = await adminEntries(server, contest.contest_id);
    const detail = (await getDetail(server, contest.contest_id)).body;
    assert.equal(detail.entries_filled, entries.length);
    assert.equal(detail.total_pot_micros, entries.length * BET);
    assert.ok(entries.length <= 25);
    const entered = new Set(entries.map((e) => e.user_id));
    assert.equal(entered.size, entries.length, 'one entry per user');
    for (const u of acknowledged) assert.ok(entered.has(u.userId), 'an acknowledged entry survives the crash');
    // Each user's balance shows a reservation exactly when the entry exists.
    for (const u of users) if (entered.has(u.userId)) book.staked(u, BET);
    await book.check();
  });

  it('a contest whose last market resolved while the process was down is resolved at start', async () => {
    let server = await start();
    let book = new MoneyBook(server);
    const markets = await createMarkets(server, 2);
    const contest = await createContest(server, contestConfig(markets, { game_type: 'outcast', winning_split_bps: [] }));
    const users = await book.fundedUsers(2, BET);
    for (const [user, pick] of [
      [users[0]!, up(markets[1]!)],
      [users[1]!, down(markets[1]!)],
    ] as const) {
      assert.equal((await enter(server, user, contest.contest_id, [pick])).status, 201);
      book.staked(user, BET);
    }
    await resolveMarket(server, markets[0]!, 'VOID');
    assert.equal(await server.stop(), 0);

    // The state a crash leaves between the market's durable resolution and the contest's: the market record
    // says RESOLVED, the contest is still open.
    await resolveMarketsWhileStopped(server.dataDir, [markets[1]!], 'NO');

    server = await start(server);
    book = book.rebind(server);
    // The start queues the finish before it listens and serves without waiting for it.
    const s = server;
    await waitFor(async () => assert.ok(s.logs.some((l) => l['msg'] === 'contests recovered' && l['finished'] === 1)), {
      timeoutMs: 10_000,
      what: 'the log of the recovery',
    });
    const detail = (await getDetail(server, contest.contest_id, users[1]!.token)).body;
    assert.equal(detail.status, 'resolved');
    assert.deepEqual(
      [detail.caller.entries[0].payout_micros, detail.caller.entries[0].rank, detail.caller.entries[0].picks[0].outcome],
      [2 * BET, 1, 'won'],
    );
    book.settled(users[0]!, BET, 0);
    book.settled(users[1]!, BET, 2 * BET);
    await book.check();
  });
});
