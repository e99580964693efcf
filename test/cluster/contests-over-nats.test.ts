// Contests across processes: the gateway runs the contests' lanes and keeps their records (the coordinator's
// part, src/contests/contest-owners.ts), the stakes are reserved by each entrant's shard node, the prize pool
// is the protocol's on owner 0 (node a). Entries of users on both nodes, settled by a market's resolution,
// each user's balance on its node exact to the micro against what its entry's view says it was paid; an
// entry whose node was gone when it was sent, kept as a doubt across a SIGKILL of the gateway itself and
// settled by sending it again once both are back; a contest created while the protocol's node was gone, its
// pool a doubt that the gateway's next start opens, the contest then listed, tracked and settled by its
// market. After each test, the checks of helpers/gateway-cluster.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { ContestDetail } from '../../src/contract/contests.js';
import { PROTOCOL, userAccount } from '../../src/records/ledger.js';
import { contestConfig, createContest, enter, getDetail, listedIds, up, down } from '../helpers/contests.js';
import { assertApiError } from '../helpers/errors.js';
import { admin, client } from '../helpers/http.js';
import { gatewayCluster, userOn } from '../helpers/gateway-cluster.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { natsForFile } from '../helpers/nats-server.js';
import { A, B, MAP, waitForQuiet } from '../helpers/owner-nodes.js';
import { restartServer, type TestServer } from '../helpers/server.js';
import { credit, type TestUser } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const fixture = natsForFile();
const { skip } = fixture;
const { withCluster, bucket } = gatewayCluster(fixture);

const FUNDS = 5_000_000n;
const STAKE = 1_000_000n;
const POOL = 3_000_000n;

const ownerOf = (user: TestUser) => MAP.ownerOf(userAccount(user.userId));
const bucketOf = (user: TestUser, name: string) => bucket(ownerOf(user), userAccount(user.userId), name);

/** Users on node a and node b, each funded on its node. */
async function fundedUsers(gateway: TestServer, owners: readonly number[]): Promise<TestUser[]> {
  const users: TestUser[] = [];
  for (const owner of owners) users.push(await userOn(gateway, owner));
  await Promise.all(users.map((user) => credit(gateway, user.address, Number(FUNDS))));
  await waitFor(async () => (await Promise.all(users.map((user) => bucketOf(user, 'available')))).every((micros) => micros === FUNDS), {
    what: 'every user funded on its node',
  });
  return users;
}

const contestBody = (marketId: number) =>
  contestConfig([marketId], {
    protocol_prize_pool_micros: Number(POOL),
    bet_amount_micros: Number(STAKE),
    winning_split_bps: [7_000, 3_000],
  });

/** After the contest resolved: each user's node pays back exactly what the entry's view says it won. */
async function assertPaidAsViewed(gateway: TestServer, contestId: string, users: readonly TestUser[]): Promise<bigint> {
  let paid = 0n;
  for (const user of users) {
    const detail = (await getDetail(gateway, contestId, user.token)).body as ContestDetail;
    const entries = detail.caller?.entries ?? [];
    assert.equal(entries.length, 1, `one entry of ${user.userId}`);
    const payout = BigInt(entries[0]!.payout_micros ?? 0);
    paid += payout;
    assert.equal(await bucketOf(user, 'available'), FUNDS - STAKE + payout, `${user.userId} on owner ${ownerOf(user)}`);
    assert.equal(await bucketOf(user, 'reserved'), 0n);
  }
  return paid;
}

test(
  'entries of users on both nodes, one contest, settled by its market: each paid on its node what its entry says',
  { skip },
  async () => {
    await withCluster(async ({ gateway }) => {
      const users = await fundedUsers(gateway, [A, A, B, B]);
      const market = (await createMarket(gateway)).market_id;
      const contest = await createContest(gateway, contestBody(market));
      // Listed and read through the gateway, which keeps the contests' records, though its pool is on node a.
      assert.equal((await getDetail(gateway, contest.contest_id)).status, 200);
      assert.equal(await bucket(A, PROTOCOL, 'committed'), POOL);

      const keyOfFirst = randomUUID();
      const picks = [up(market), down(market), up(market), down(market)];
      for (const [i, user] of users.entries()) {
        const body = { contest_id: contest.contest_id, bets: [picks[i]!], ...(i === 0 ? { idempotency_key: keyOfFirst } : {}) };
        const entered = await client(gateway.baseUrl, user.token).post('/v1/user/contest_bet', body);
        assert.equal(entered.status, 201, JSON.stringify(entered.body));
      }
      // The key's replay is answered from the gateway's records: the same entry, nothing reserved again.
      const replay = await client(gateway.baseUrl, users[0]!.token).post('/v1/user/contest_bet', {
        contest_id: contest.contest_id,
        bets: [picks[0]!],
        idempotency_key: keyOfFirst,
      });
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      for (const user of users) assert.equal(await bucketOf(user, 'reserved'), STAKE, `${user.userId}'s stake held on its node`);
      assert.equal(((await getDetail(gateway, contest.contest_id)).body as ContestDetail).entries_filled, 4);

      await resolveMarket(gateway, market, 'YES');
      await waitFor(async () => ((await getDetail(gateway, contest.contest_id)).body as ContestDetail).status === 'resolved', {
        what: 'the contest resolved',
      });
      await waitForQuiet(fixture.nc);
      const paid = await assertPaidAsViewed(gateway, contest.contest_id, users);
      assert.equal(paid, POOL + 4n * STAKE, 'the pot paid out whole: both winners on both nodes');
      assert.equal(await bucket(A, PROTOCOL, 'committed'), 0n, 'the pool closed');
    });
  },
);

test(
  'an entry sent while its node was gone is a doubt: the gateway killed with it, both back, it is sent again and settled once',
  { skip },
  async () => {
    await withCluster(async ({ nodes, gateway }) => {
      const [onA, onB] = await fundedUsers(gateway, [A, B]);
      const market = (await createMarket(gateway)).market_id;
      const contest = await createContest(gateway, contestBody(market));
      const key = randomUUID();
      const enterB = (server: TestServer) =>
        client(server.baseUrl, onB!.token).post('/v1/user/contest_bet', {
          contest_id: contest.contest_id,
          bets: [up(market)],
          idempotency_key: key,
        });

      await nodes[1].kill();
      await waitFor(async () => (await enterB(gateway)).status === 503, {
        what: "node b's entry refused while it is gone",
        timeoutMs: 5_000,
      });
      // Its answer unknown, the contest takes no other entry before it is settled (its count would be wrong).
      assertApiError(await enter(gateway, onA!, contest.contest_id, [down(market)]), 503, 'OVERLOADED');
      await gateway.kill();
      await nodes[1].start();
      const restarted = await restartServer(gateway);
      // At its start the gateway sent the doubt again: node b reserved the stake once, and the entry is the gateway's.
      await waitFor(async () => (await bucketOf(onB!, 'reserved')) === STAKE, { what: 'the doubt settled at the start' });
      const replay = await enterB(restarted);
      assert.equal(replay.status, 200, `the user's retry with its key finds the entry: ${JSON.stringify(replay.body)}`);
      assert.equal((await enter(restarted, onA!, contest.contest_id, [down(market)])).status, 201);
      assert.equal(((await getDetail(restarted, contest.contest_id)).body as ContestDetail).entries_filled, 2);
      assert.equal(await bucketOf(onB!, 'reserved'), STAKE, 'reserved once');

      await resolveMarket(restarted, market, 'YES');
      await waitFor(async () => ((await getDetail(restarted, contest.contest_id)).body as ContestDetail).status === 'resolved', {
        what: 'the contest resolved',
      });
      await waitForQuiet(fixture.nc);
      const paid = await assertPaidAsViewed(restarted, contest.contest_id, [onA!, onB!]);
      assert.equal(paid, POOL + 2n * STAKE);
      return restarted;
    });
  },
);

test(
  "a contest created while the protocol's node was gone: its pool a doubt, opened by the gateway's next start, then listed, entered and settled",
  { skip },
  async () => {
    await withCluster(async ({ nodes, gateway }) => {
      const [onB] = await fundedUsers(gateway, [B]);
      const operator = admin(gateway);
      const funded = await operator.post('/v1/admin/protocol/credit', { amount_micros: Number(POOL), idempotency_key: randomUUID() });
      assert.equal(funded.status, 200, JSON.stringify(funded.body));
      const market = (await createMarket(gateway)).market_id;

      await nodes[0].kill(); // owner 0, the protocol's
      await waitFor(async () => (await operator.post('/v1/admin/contests', contestBody(market))).status === 503, {
        what: 'the create refused while the pool cannot be opened',
        timeoutMs: 5_000,
      });
      assert.deepEqual(await listedIds(gateway), [], 'nothing listed while its pool is in doubt');
      await gateway.kill();
      await nodes[0].start();
      const restarted = await restartServer(gateway);
      // Each create the waitFor sent while node a was gone was one doubt: each pool opened once, each contest listed.
      const listed = await waitFor(
        async () => {
          const ids = await listedIds(restarted);
          return ids.length > 0 && ids;
        },
        { what: 'the contest listed once its pool opened' },
      );
      await waitForQuiet(fixture.nc);
      assert.equal(await bucket(A, PROTOCOL, 'committed'), BigInt(listed.length) * POOL);
      const contestId = listed[0]!;
      assert.equal((await enter(restarted, onB!, contestId, [up(market)])).status, 201);

      await resolveMarket(restarted, market, 'YES');
      // Tracked at the start that opened it: the market's resolution finishes it (and any twin).
      await waitFor(
        async () => {
          for (const id of listed) if (((await getDetail(restarted, id)).body as ContestDetail).status !== 'resolved') return false;
          return true;
        },
        { what: 'the contests resolved' },
      );
      await waitForQuiet(fixture.nc);
      // One entrant: first place's 70 % of the pot; the second place's share goes back to the protocol.
      assert.equal(await assertPaidAsViewed(restarted, contestId, [onB!]), ((POOL + STAKE) * 7_000n) / 10_000n);
      assert.equal(await bucket(A, PROTOCOL, 'committed'), 0n);
      return restarted;
    });
  },
);
