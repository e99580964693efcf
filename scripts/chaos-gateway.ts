// `npm run chaos -- --gateway --rounds N [--seed N]`: the chaos run of the cluster through its gateway. A
// real nats-server, two shard nodes (test/helpers/owner-nodes.ts NODES), a coordinator and a gateway that keeps
// nothing in front of it, with two quoting makers on the gateway's socket (one account on each node); per
// round a seeded mix through the gateway's HTTP (unsigned RFQs of users on both nodes, contest entries and
// withdrawals under idempotency keys, withdrawals' ends: all but the RFQs forwarded to the coordinator), and
// at a seeded moment a SIGKILL of the coordinator, the gateway, node a, node b or nats-server (each in turn),
// started again (a killed gateway as a new one: it had nothing to start from). The nodes take the partition
// map from the coordinator (a node killed starts again on the one the coordinator answers).
// Then, through the gateway: every acknowledged RFQ read back and terminal; every entry and withdrawal
// acknowledged, and every one whose answer was lost, sent again under its key (half the lost entries given up
// on instead): an acknowledged one answers itself (200, the same entry or withdrawal), a lost one either
// itself or a first time, never a second; each acknowledged end stands; each user's reserved money is exactly
// its entries' stakes (no stake without its entry on the gateway: the doubts of contests/contest-owners.ts
// settled, which a given-up entry its node had taken needs) and its at-risk money exactly its completed RFQs'
// wagers; the admin's ledger check clean and the cluster's through NATS too. After the last
// round the market resolves, the contest settles with nothing left reserved, everything stops, the
// coordinator's own check passes and the owners' journals check together.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { contestConfig, createContest, adminEntries } from '../test/helpers/contests.js';
import { gatewayCluster, makerWalletOn, userOn } from '../test/helpers/gateway-cluster.js';
import { admin, client, type HttpResult } from '../test/helpers/http.js';
import { connectMaker, registerMaker, type ConnectedMaker, type TestMaker } from '../test/helpers/makers.js';
import { createMarket, resolveMarket } from '../test/helpers/markets.js';
import { A, assertClusterCheckClean, assertJournalsClean, B, waitForQuiet } from '../test/helpers/owner-nodes.js';
import { autoQuote, unsignedBody } from '../test/helpers/rfq.js';
import { restartServer, type TestServer } from '../test/helpers/server.js';
import { credit, type TestUser } from '../test/helpers/users.js';
import { waitFor } from '../test/helpers/wait.js';
import { openChaosCluster } from './chaos-cluster.js';
import { int, pick, prng, type Rng } from './fuzz/gen.js';

const USERS_PER_NODE = 2;
const FUNDS_MICROS = 1_000_000_000;
const WAGER_MICROS = 1_000_000;
const STAKE_MICROS = 1_000_000;
const WITHDRAWAL_MICROS = 100_000;
/** Requests of each kind per round: enough to be in flight when the kill comes, few enough for 2 cores. */
const RFQS_PER_ROUND = 16;
const ENTRIES_PER_ROUND = 8;
const WITHDRAWALS_PER_ROUND = 4;
const ENDS_PER_ROUND = 2;
const SPREAD_MS = 300;
const KILL_MIN_MS = 20;
const KILL_MAX_MS = 300;
const ROUND_TIMEOUT_MS = 90_000;

const VICTIMS = ['coordinator', 'gateway', 'node a', 'node b', 'nats-server'] as const;
type Victim = (typeof VICTIMS)[number];

export interface GatewayChaosReport {
  rounds: number;
  victims: Victim[];
  killAfterMs: number[];
  ackedRfqs: number;
  ackedEntries: number;
  ackedWithdrawals: number;
  ackedEnds: number;
  /** Keyed requests whose answer a kill took, sent again after it (each answered as itself or made once). */
  resentAfterKill: number;
}

interface Keyed {
  user: TestUser;
  key: string;
  /** The entry's index or the withdrawal's id, once acknowledged. */
  made: number | string | null;
}

type End = 'complete' | 'fail';

interface World {
  /** The gateway every request and maker socket goes to. */
  gateway: TestServer;
  coordinator: TestServer;
  users: TestUser[];
  makers: TestMaker[];
  connected: ConnectedMaker[];
  market: number;
  contestId: string;
  rfqs: Array<{ user: TestUser; requestId: string }>;
  entries: Keyed[];
  withdrawals: Keyed[];
  /** Withdrawals acknowledged and not yet ended (with the end once one was asked), and those ended. */
  unended: Array<{ id: string; how: End | null }>;
  ends: Map<string, End>;
  resent: number;
}

export async function runGatewayChaos(
  rounds: number,
  seed: number,
  log: (line: string) => void = () => undefined,
): Promise<GatewayChaosReport> {
  const rng = prng(seed);
  const cluster = await openChaosCluster('parlayd-chaos-gateway-', true);
  const { root, nats, nc, nodes } = cluster;
  const { startGateway, startEdge } = gatewayCluster({ skip: false, server: nats, nc });
  const gateways: TestServer[] = [];
  const victims: Victim[] = [];
  const killAfterMs: number[] = [];
  let world: World | null = null;
  try {
    // The nodes take the partition map from the coordinator, which waits for them: they start together.
    const listening = Promise.all(nodes.map((node) => node.start()));
    listening.catch(() => undefined); // awaited below
    const coordinator = await startGateway(join(root, 'coordinator'), 'coordinator');
    gateways.push(coordinator);
    await listening;
    const gateway = await startEdge(coordinator, 'gateway-chaos');
    gateways.push(gateway);
    world = await setUp(gateway, coordinator);
    const firstVictim = int(rng, VICTIMS.length);
    for (let round = 1; round <= rounds; round++) {
      const deadline = Date.now() + ROUND_TIMEOUT_MS;
      const victim = VICTIMS[(firstVictim + round) % VICTIMS.length]!;
      const afterMs = KILL_MIN_MS + int(rng, KILL_MAX_MS - KILL_MIN_MS);
      victims.push(victim);
      killAfterMs.push(afterMs);
      const lost = { entries: [] as Keyed[], withdrawals: [] as Keyed[] };
      const load = startLoad(world, rng, lost);
      await sleep(afterMs);
      if (victim === 'nats-server') await nats.restart();
      else if (victim === 'coordinator') {
        await world.coordinator.kill();
        await load;
        world.coordinator = await restartServer(world.coordinator);
        gateways.push(world.coordinator);
      } else if (victim === 'gateway') {
        await world.gateway.kill();
        await load;
        world.gateway = await startEdge(world.coordinator, 'gateway-chaos');
        gateways.push(world.gateway);
        await reconnectMakers(world);
      } else {
        const node = nodes.find(({ node: n }) => n.name === victim)!;
        await node.kill();
        await load;
        await node.start();
      }
      await load;
      await waitForQuiet(nc, 30_000);
      await resendLost(world, lost, rng);
      await checkAcked(world);
      await waitForQuiet(nc, 30_000);
      await assertClusterCheckClean(nc);
      assert.ok(Date.now() < deadline, `round ${round} took over ${ROUND_TIMEOUT_MS} ms`);
      log(
        `round ${round}: ${victim} killed after ${afterMs} ms; acked so far ${world.rfqs.length} RFQs, ${world.entries.length} entries, ${world.withdrawals.length} withdrawals, ${world.ends.size} ends; all found, the checks clean`,
      );
    }
    await settleTheContest(world);
    await waitForQuiet(nc, 30_000);
    await assertClusterCheckClean(nc);
    for (const maker of world.connected) await maker.close();
    assert.equal(await world.gateway.stop(), 0);
    assert.equal(await world.coordinator.stop(), 0, "the coordinator's own ledger check at its stop");
    await Promise.all(nodes.map((node) => node.stop()));
    assertJournalsClean(nodes);
    return {
      rounds,
      victims,
      killAfterMs,
      ackedRfqs: world.rfqs.length,
      ackedEntries: world.entries.length,
      ackedWithdrawals: world.withdrawals.length,
      ackedEnds: world.ends.size,
      resentAfterKill: world.resent,
    };
  } finally {
    for (const maker of world?.connected ?? []) await maker.close().catch(() => undefined);
    await Promise.allSettled(gateways.map((gateway) => gateway.kill()));
    await cluster.close();
  }
}

async function setUp(gateway: TestServer, coordinator: TestServer): Promise<World> {
  const users: TestUser[] = [];
  for (const owner of [A, B]) for (let i = 0; i < USERS_PER_NODE; i++) users.push(await userOn(gateway, owner));
  for (const user of users) await credit(gateway, user.address, FUNDS_MICROS);
  const makers = [
    await registerMaker(gateway, makerWalletOn(A), 'chaos maker a'),
    await registerMaker(gateway, makerWalletOn(B), 'chaos maker b'),
  ];
  const market = (await createMarket(gateway)).market_id;
  const contest = await createContest(gateway, contestConfig([market], { entry_cap: 100_000, bet_amount_micros: STAKE_MICROS }));
  const world: World = {
    gateway,
    coordinator,
    users,
    makers,
    connected: [],
    market,
    contestId: contest.contest_id,
    rfqs: [],
    entries: [],
    withdrawals: [],
    unended: [],
    ends: new Map(),
    resent: 0,
  };
  await reconnectMakers(world);
  return world;
}

/** The makers on the (new) gateway, quoting every RFQ. */
async function reconnectMakers(world: World): Promise<void> {
  for (const maker of world.connected) await maker.close().catch(() => undefined);
  world.connected = [];
  for (const maker of world.makers) {
    const connected = await connectMaker(world.gateway, maker);
    autoQuote(connected, { odds: 2 });
    world.connected.push(connected);
  }
}

/** A request that a kill may cut off: its answer, or null when none came. */
async function tried(request: () => Promise<HttpResult>): Promise<HttpResult | null> {
  try {
    return await request();
  } catch {
    return null; // the connection closed with the gateway
  }
}

/** One round's requests at seeded moments of the spread; resolves once each is answered or cut off. */
function startLoad(world: World, rng: Rng, lost: { entries: Keyed[]; withdrawals: Keyed[] }): Promise<unknown> {
  const { gateway } = world;
  const jobs: Array<Promise<unknown>> = [];
  const later = (job: () => Promise<unknown>) => jobs.push(sleep(int(rng, SPREAD_MS)).then(job));
  for (let i = 0; i < RFQS_PER_ROUND; i++) {
    const user = pick(rng, world.users);
    const direction = pick(rng, ['up', 'down'] as const);
    later(async () => {
      const api = client(gateway.baseUrl, user.token);
      const created = await tried(() =>
        api.post('/v1/rfq/unsigned?wait_ms=2000', unsignedBody([{ market_id: world.market, direction }], { wager_micros: WAGER_MICROS })),
      );
      if (created?.status === 201) world.rfqs.push({ user, requestId: created.body.request_id });
    });
  }
  for (let i = 0; i < ENTRIES_PER_ROUND; i++) {
    const keyed: Keyed = { user: pick(rng, world.users), key: randomUUID(), made: null };
    later(async () => {
      const entered = await tried(() => enter(world, gateway, keyed));
      if (entered?.status === 201) world.entries.push({ ...keyed, made: entered.body.entry_index });
      else if (entered === null || entered.status === 503) lost.entries.push(keyed);
      else assert.fail(`an entry refused ${entered.status}: ${JSON.stringify(entered.body)}`);
    });
  }
  for (let i = 0; i < WITHDRAWALS_PER_ROUND; i++) {
    const keyed: Keyed = { user: pick(rng, world.users), key: randomUUID(), made: null };
    later(async () => {
      const asked = await tried(() => withdraw(gateway, keyed));
      if (asked?.status === 201) {
        world.withdrawals.push({ ...keyed, made: asked.body.withdrawal_id });
        world.unended.push({ id: asked.body.withdrawal_id, how: null });
      } else if (asked === null || asked.status === 503) lost.withdrawals.push(keyed);
      else assert.fail(`a withdrawal refused ${asked.status}: ${JSON.stringify(asked.body)}`);
    });
  }
  for (const { id, how: asked } of world.unended.splice(0, ENDS_PER_ROUND)) {
    // An end cut off is asked again the same way in a later round: the same end again is 200.
    const how = asked ?? pick(rng, ['complete', 'fail'] as const);
    later(async () => {
      const ended = await tried(() => admin(gateway).post(`/v1/admin/withdrawals/${id}/${how}`, {}));
      if (ended?.status === 200) world.ends.set(id, how);
      else world.unended.push({ id, how });
    });
  }
  return Promise.all(jobs);
}

const enter = (world: World, gateway: TestServer, keyed: Keyed) =>
  client(gateway.baseUrl, keyed.user.token).post('/v1/user/contest_bet', {
    contest_id: world.contestId,
    bets: [{ market_id: world.market, direction: 'up' }],
    idempotency_key: keyed.key,
  });

const withdraw = (gateway: TestServer, keyed: Keyed) =>
  client(gateway.baseUrl, keyed.user.token).post('/v1/user/withdrawals', {
    amount_micros: WITHDRAWAL_MICROS,
    destination: `0x${'5a'.repeat(20)}`,
    idempotency_key: keyed.key,
  });

/** Sends `request` until it is answered otherwise than 503 (a node or the server still coming back). */
async function untilServed(world: World, request: () => Promise<HttpResult>, what: string): Promise<HttpResult> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    let answer: HttpResult | null = null;
    let failure: unknown = null;
    try {
      answer = await request();
    } catch (err) {
      failure = err; // the connection closed, or not yet open again
    }
    if (answer !== null && answer.status !== 503) return answer;
    if (Date.now() > deadline) {
      const { process, logs, stderr } = world.gateway;
      const errors = logs.filter((entry) => Number(entry['level']) >= 50).slice(-5);
      assert.fail(
        `${what}: still ${answer?.status ?? `unanswered (${String(failure)}, ${String((failure as Error | null)?.cause)})`} after 10 s; the gateway's exit code ${process.exitCode}, its last errors ${JSON.stringify(errors)}, stderr ${stderr.slice(-5).join(' | ')}`,
      );
    }
    await sleep(100);
  }
}

/** Every keyed request a kill cut off, sent again: answered as itself if it was made, or made now, once. */
async function resendLost(world: World, lost: { entries: Keyed[]; withdrawals: Keyed[] }, rng: Rng): Promise<void> {
  // Half the lost entries are given up on, as a user may: one that its node had taken must still end up an
  // entry (its doubt sent again by the gateway), or its stake would stay held with no entry (checkAcked).
  for (const keyed of lost.entries.filter(() => int(rng, 2) === 0)) {
    const again = await untilServed(world, () => enter(world, world.gateway, keyed), 'a lost entry sent again');
    assert.ok([200, 201].includes(again.status), JSON.stringify(again.body));
    world.entries.push({ ...keyed, made: again.body.entry_index });
    world.resent++;
  }
  for (const keyed of lost.withdrawals) {
    const again = await untilServed(world, () => withdraw(world.gateway, keyed), 'a lost withdrawal sent again');
    assert.ok([200, 201].includes(again.status), JSON.stringify(again.body));
    world.withdrawals.push({ ...keyed, made: again.body.withdrawal_id });
    world.unended.push({ id: again.body.withdrawal_id, how: null });
    world.resent++;
  }
}

async function checkAcked(world: World): Promise<void> {
  const { gateway } = world;
  // A 503 is "try again" (a node joined again by the gateway, after its restart): each replay until served.
  for (const keyed of world.entries) {
    const replay = await untilServed(world, () => enter(world, gateway, keyed), 'an entry replayed');
    assert.deepEqual([replay.status, replay.body.entry_index], [200, keyed.made], `entry under ${keyed.key} answers itself`);
  }
  for (const keyed of world.withdrawals) {
    const replay = await untilServed(world, () => withdraw(gateway, keyed), 'a withdrawal replayed');
    assert.deepEqual([replay.status, replay.body.withdrawal_id], [200, keyed.made], `withdrawal under ${keyed.key} answers itself`);
    const end = world.ends.get(keyed.made as string);
    if (end !== undefined) assert.equal(replay.body.status, end === 'complete' ? 'completed' : 'failed', 'its end stands');
  }
  // Money held is exactly what the records on the gateway say it is for: every stake its entry, every risk its fill.
  const entries = await adminEntries(gateway, world.contestId);
  for (const user of world.users) {
    const api = client(gateway.baseUrl, user.token);
    // Every RFQ of the user ended (one whose 201 a kill took ends on its node as it would), each acked one among them.
    const rfqs = await waitFor(
      async () => {
        const listed = await listRfqs(api);
        return listed.every((rfq) => rfq.status !== 'pending' && rfq.status !== 'finalizing') && listed;
      },
      { what: `${user.userId}'s RFQs ended`, timeoutMs: 15_000 },
    );
    const listed = new Set(rfqs.map((rfq) => rfq.request_id));
    for (const { user: owner, requestId } of world.rfqs) {
      if (owner === user) assert.ok(listed.has(requestId), `acked RFQ ${requestId} listed`);
    }
    const atRisk = rfqs.filter((rfq) => rfq.status === 'completed').reduce((sum, rfq) => sum + BigInt(rfq.filled_wager_micros), 0n);
    const balance = (await api.get('/v1/user/balance')).body;
    const staked = entries.filter((entry) => entry.user_id === user.userId).length * STAKE_MICROS;
    assert.equal(balance.reserved_micros, String(staked), `${user.userId}: reserved = its entries' stakes`);
    assert.equal(balance.at_risk_micros, String(atRisk), `${user.userId}: at risk = its completed RFQs' wagers`);
  }
  const check = await admin(gateway).get('/v1/admin/ledger/check');
  assert.deepEqual([check.status, check.body.ok], [200, true], JSON.stringify(check.body));
}

/** Every RFQ of a user, newest first, every page. */
async function listRfqs(
  api: ReturnType<typeof client>,
): Promise<Array<{ request_id: string; status: string; filled_wager_micros: string }>> {
  const rfqs = [];
  let cursor: string | null = null;
  do {
    const page: HttpResult = await api.get(`/v1/user/rfqs?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    rfqs.push(...page.body.rfqs);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return rfqs;
}

/** The market resolves: the contest settles, its stakes collected, nothing left reserved. */
async function settleTheContest(world: World): Promise<void> {
  await resolveMarket(world.gateway, world.market, 'YES');
  await waitFor(async () => (await client(world.gateway.baseUrl).get(`/v1/contests/${world.contestId}`)).body.status === 'resolved', {
    what: 'the contest resolved',
    timeoutMs: 30_000,
  });
  for (const user of world.users) {
    await waitFor(async () => (await client(world.gateway.baseUrl, user.token).get('/v1/user/balance')).body.reserved_micros === '0', {
      what: `${user.userId}'s stakes settled`,
    });
  }
  const check = await admin(world.gateway).get('/v1/admin/ledger/check');
  assert.deepEqual([check.status, check.body.ok], [200, true], JSON.stringify(check.body));
}
