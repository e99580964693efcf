// The coordinator and gateways that keep nothing (docs/scaling.md, "The coordinator"): two shard nodes
// (test/helpers/owner-nodes.ts: node a owners 0 and 64, node b owner 128), a coordinator (the service with its
// own LMDB of users, sessions, makers and markets: src/cluster/coordinator-door.ts) and two gateways
// (PARLAYD_ROLE=gateway: src/boot/gateway-app.ts), on a real nats-server. A user logs in on one gateway and
// trades on the other; a maker registered through one gateway quotes on the other's socket; what changes at
// the coordinator (preferences, a logout, a maker removed, protection limits) reaches both gateways; the
// coordinator killed and started again; a gateway killed with its makers while another's maker quotes. After each test every owner is quiet and the cluster's ledger check is clean, through the
// coordinator and through a gateway.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type { LedgerCheck } from '../../src/ledger/check.js';
import type { RfqResult } from '../../src/contract/rfq.js';
import { makerAccount, userAccount } from '../../src/records/ledger.js';
import { assertApiError } from '../helpers/errors.js';
import { admin, client } from '../helpers/http.js';
import { connectMaker, registerMaker } from '../helpers/makers.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { natsForFile } from '../helpers/nats-server.js';
import { metricSum, openFeed } from '../helpers/dashboard.js';
import type { Frame } from '../../src/dashboard/frame.js';
import { gatewayCluster, makerWalletOn, userOn } from '../helpers/gateway-cluster.js';
import { A, B, waitForQuiet } from '../helpers/owner-nodes.js';
import { autoQuote, unsignedBody } from '../helpers/rfq.js';
import { restartServer, type TestServer } from '../helpers/server.js';
import { credit } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const SHARD_NODE = fileURLToPath(new URL('../../src/cluster/shard-node-main.js', import.meta.url));
const fixture = natsForFile();
const { skip } = fixture;

/** As in rfq-over-nats.test.ts: an RFQ completes in time only by closing early, once every gateway answered. */
const RFQ_SETTINGS = { PARLAYD_QUOTE_WINDOW_MS: '20000' };
const { withCluster, bucket, startEdge } = gatewayCluster(fixture, RFQ_SETTINGS);
/** Shard nodes given no partition map: they take the coordinator's. */
const MAP_TAKEN = gatewayCluster(fixture, RFQ_SETTINGS, {}, { nodesTakeMap: true });
/** A coordinator whose per-IP bucket holds 5 requests and refills one a minute. */
const LIMITED = gatewayCluster(fixture, {}, { PARLAYD_RATE_LIMIT_PER_S: '1', PARLAYD_RATE_LIMIT_BURST: '5' });

async function withGateways(
  run: (coordinator: TestServer, gateways: [TestServer, TestServer]) => Promise<TestServer | void>,
  cluster = { withCluster, startEdge },
) {
  await cluster.withCluster(async ({ gateway: coordinator }) => {
    const gateways = (await Promise.all([startEdge(coordinator, 'gateway-1'), startEdge(coordinator, 'gateway-2')])) as [
      TestServer,
      TestServer,
    ];
    try {
      const now = (await run(coordinator, gateways)) ?? coordinator;
      const check = await admin(gateways[0]).get<LedgerCheck>('/v1/admin/ledger/check');
      assert.deepEqual([check.status, check.body.ok], [200, true], 'the ledger check through a gateway: every node');
      for (const gateway of gateways) assert.equal(await gateway.stop(), 0);
      return now;
    } finally {
      await Promise.allSettled(gateways.map((gateway) => gateway.kill()));
    }
  });
}

test(
  'a taker logged in on one gateway filled by a maker on the other, exact to the micro; changes at the coordinator reach both',
  { skip },
  async () => {
    await withGateways(async (coordinator, [one, two]) => {
      // Logged in through gateway one (forwarded to the coordinator), funded through gateway two.
      const taker = await userOn(one, A);
      await credit(two, taker.address, 10_000_000);
      const maker = await registerMaker(two, makerWalletOn(B), 'maker on b', 50_000_000);
      const market = (await createMarket(one)).market_id;
      const connected = await connectMaker(two, maker);
      const quoting = autoQuote(connected, { odds: 2.5 });
      const onOne = client(one.baseUrl, taker.token);
      const onTwo = client(two.baseUrl, taker.token);
      const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
      const created = await onOne.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body());
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(
        [created.body.status, created.body.filled_wager_micros, created.body.payout_micros],
        ['completed', '2000000', '5000000'],
        JSON.stringify(created.body),
      );
      const heard = connected.socket.received.find((m) => m.type === 'rfq' && m.request_id === created.body.request_id);
      assert.equal((heard as { taker: { address: string } | null }).taker?.address, taker.address.toLowerCase(), 'the taker is named');
      // The same session on the other gateway: its copy is fetched there.
      assert.equal((await onTwo.get<RfqResult>(`/v1/rfq/${created.body.request_id}`)).body.status, 'completed');
      assert.deepEqual((await onTwo.get('/v1/user/balance')).body, {
        available_micros: '8000000',
        reserved_micros: '0',
        at_risk_micros: '2000000',
        pending_withdrawal_micros: '0',
      });
      // The maker's socket session was made by the coordinator: it works on the other gateway's HTTP too.
      const makerOnOne = client(one.baseUrl, connected.sessionToken);
      assert.deepEqual((await makerOnOne.get('/v1/mm/balance')).body, {
        available_micros: '47000000',
        locked_micros: '3000000',
        pending_withdrawal_micros: '0',
      });

      // Preferences changed through gateway one (forwarded) apply to the next RFQ it admits: its copy heard the
      // change before the answer (the coordinator publishes first; another gateway hears it as it is delivered).
      assert.equal((await onOne.patch('/v1/user/preferences', { anonymous_mode_enabled: true })).status, 200);
      const shielded = await onOne.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body());
      assert.equal(shielded.body.status, 'completed', JSON.stringify(shielded.body));
      const heardShielded = connected.socket.received.find((m) => m.type === 'rfq' && m.request_id === shielded.body.request_id);
      assert.equal((heardShielded as { taker: unknown }).taker, null, 'anonymous mode, set on the other gateway, shields the taker');
      quoting.stop();

      await resolveMarket(two, market, 'YES');
      await waitFor(async () => (await bucket(A, userAccount(taker.userId), 'available')) === 16_000_000n, {
        what: 'both fills paid out: 10 - 2 - 2 + 5 + 5 (on node a)',
      });
      await waitForQuiet(fixture.nc);
      assert.equal(await bucket(B, makerAccount(maker.address), 'available'), 44_000_000n, 'the maker paid 2 x 3 of liability');
      assert.equal(await bucket(B, makerAccount(maker.address), 'locked'), 0n);

      // A logout on gateway two ends the session on gateway one, which had a copy of it.
      assert.equal((await onTwo.post('/v1/auth/logout', {})).status, 200);
      await waitFor(async () => (await onOne.get(`/v1/rfq/${created.body.request_id}`)).status === 401, {
        what: 'the revocation heard by gateway one',
        timeoutMs: 2_000,
      });
      assertApiError(await onOne.post('/v1/rfq/unsigned', body()), 401, 'UNAUTHENTICATED');

      // A maker removed through gateway one: its socket on gateway two closes, its session ends everywhere.
      const removed = await admin(one).delete<{ removed: boolean }>(`/v1/admin/market-makers/${maker.address}`);
      assert.equal(removed.status, 200, JSON.stringify(removed.body));
      await connected.closed;
      assertApiError(await makerOnOne.get('/v1/mm/balance'), 401, 'UNAUTHENTICATED');
      assertApiError(await client(two.baseUrl, connected.sessionToken).get('/v1/mm/stats'), 401, 'UNAUTHENTICATED');
      assert.equal(coordinator.logs.filter((entry) => entry['msg'] === 'forwarded request failed on the coordinator').length, 0);
    });
  },
);

test(
  'the coordinator killed: forwarded requests 503, RFQs of copied sessions go on; started again, both gateways take their copies again',
  { skip },
  async () => {
    await withGateways(async (coordinator, [one, two]) => {
      const taker = await userOn(one, B);
      await credit(one, taker.address, 10_000_000);
      const maker = await registerMaker(one, makerWalletOn(A), 'maker on a', 50_000_000);
      const market = (await createMarket(one)).market_id;
      const connected = await connectMaker(two, maker);
      const quoting = autoQuote(connected, { odds: 2 });
      const onOne = client(one.baseUrl, taker.token);
      const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
      assert.equal((await onOne.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body())).body.status, 'completed');

      await coordinator.kill();
      const refused = await onOne.get('/v1/user/balance');
      assertApiError(refused, 503, 'OVERLOADED');
      assert.equal(refused.headers.get('retry-after'), '1');
      // Gateway one holds the taker's session, the maker's registration and the market: the RFQ path needs no
      // coordinator. Nor does its audience: the coordinator has no maker, so the doors do not await it (were
      // they to, it would be until 2 s of its silence, past this wait).
      const whileDown = await onOne.post<RfqResult>('/v1/rfq/unsigned?wait_ms=1500', body());
      assert.equal(whileDown.status, 201, JSON.stringify(whileDown.body));
      assert.equal(whileDown.body.status, 'completed', JSON.stringify(whileDown.body));

      const restarted = await restartServer(coordinator);
      await waitFor(async () => (await onOne.get('/v1/user/balance')).status === 200, { what: 'forwarded again', timeoutMs: 10_000 });
      // A new incarnation: both gateways took their copies again (sessions are fetched anew as used).
      for (const gateway of [one, two]) {
        await waitFor(() => gateway.logs.filter((entry) => entry['msg'] === "coordinator's copies taken").length >= 2, {
          what: `${gateway.baseUrl} took its copies again`,
          timeoutMs: 5_000,
        });
      }
      const after = await onOne.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body());
      assert.equal(after.body.status, 'completed', JSON.stringify(after.body));
      quoting.stop();
      await waitForQuiet(fixture.nc);
      const balance = await client(two.baseUrl, taker.token).get<{ available_micros: string; at_risk_micros: string }>('/v1/user/balance');
      assert.deepEqual([balance.body.available_micros, balance.body.at_risk_micros], ['4000000', '6000000'], 'three fills of 2, exact');
      await connected.close();
      return restarted;
    });
  },
);

test(
  'a forwarded request is charged to its caller at the coordinator, whose address no caller can claim by a header',
  { skip },
  async () => {
    await withGateways(async (coordinator, [one]) => {
      // Each request claims another caller; the coordinator believes the claim only from its own door, whose key
      // the caller does not have: all of them are the one loopback caller's, through the gateway or not.
      const claiming = (i: number) => ({ headers: { 'x-parlayd-client': `203.0.113.${i}`, 'x-parlayd-door-key': 'guessed' } });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await client(one.baseUrl).get('/v1/mention-markets', claiming(i))).status);
      for (let i = 4; i < 8; i++) statuses.push((await client(coordinator.baseUrl).get('/v1/mention-markets', claiming(i))).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429], 'one bucket of 5, whatever the header said');
      const refused = await client(one.baseUrl).get('/v1/mention-markets');
      assertApiError(refused, 429, 'RATE_LIMITED');
      assert.equal(refused.headers.get('ratelimit-limit'), '5', "the coordinator's bucket, relayed by the gateway");
    }, LIMITED);
  },
);

test("a maker's protection limits set through one gateway, kept by the coordinator, trip its desk on the other", { skip }, async () => {
  await withGateways(async (coordinator, [one, two]) => {
    const taker = await userOn(one, A);
    await credit(one, taker.address, 10_000_000);
    const maker = await registerMaker(one, makerWalletOn(B), 'limited maker', 50_000_000);
    const market = (await createMarket(one)).market_id;
    const connected = await connectMaker(two, maker);
    const quoting = autoQuote(connected, { odds: 2 });
    const limits = { window_ms: 60_000, max_fills: 1, max_filled_wager_micros: null, max_locked_micros: null };
    // Set through gateway one, where the maker has no socket: forwarded, durable on the coordinator.
    const set = await client(one.baseUrl, connected.sessionToken).put('/v1/mm/protection', limits);
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const onTwo = client(two.baseUrl, connected.sessionToken);
    // Gateway two hears the change as it is delivered (only the gateway that forwarded the PUT has it before the answer).
    await waitFor(async () => isDeepStrictEqual((await onTwo.get<{ maker: unknown }>('/v1/mm/protection')).body.maker, limits), {
      what: "gateway two's desk has the copy",
      timeoutMs: 2_000,
    });
    const api = client(one.baseUrl, taker.token);
    const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
    assert.equal((await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body())).body.status, 'completed');
    // The one fill allowed: the desk on gateway two tripped, and takes none of the maker's quotes.
    await waitFor(async () => (await onTwo.get<{ tripped: string | null }>('/v1/mm/protection')).body.tripped === 'MAX_FILLS', {
      what: "the maker's desk tripped on gateway two",
    });
    const second = await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=1000', body());
    assert.equal(second.body.status, 'pending', JSON.stringify(second.body));
    quoting.stop();
    await connected.close();
    await waitFor(async () => (await api.get<RfqResult>(`/v1/rfq/${second.body.request_id}?wait_ms=25000`)).body.status !== 'pending', {
      what: 'the unfilled RFQ ended at its window',
      timeoutMs: 30_000,
    });
    assert.equal(coordinator.logs.filter((entry) => entry['level'] === 50).length, 0, 'no error on the coordinator');
  });
});

test(
  "a gateway killed with its makers: the other gateway's maker's quote waits at the door until the dead one is no longer awaited, then fills",
  { skip },
  async () => {
    await withGateways(async (coordinator, [one]) => {
      const doomed = await startEdge(coordinator, 'gateway-doomed');
      try {
        const taker = await userOn(one, A);
        await credit(one, taker.address, 10_000_000);
        const near = await connectMaker(one, await registerMaker(one, makerWalletOn(B), 'maker on gateway one', 50_000_000));
        const far = await connectMaker(doomed, await registerMaker(one, makerWalletOn(A), 'maker on the doomed gateway', 50_000_000));
        const quoting = [autoQuote(near, { odds: 2 }), autoQuote(far, { odds: 2 })];
        const market = (await createMarket(one)).market_id;
        const api = client(one.baseUrl, taker.token);
        const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
        assert.equal((await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body())).body.status, 'completed');
        await doomed.kill();
        // The door still awaits the dead gateway's audience (its makers), for up to 2 s of silence; the near
        // maker's quote comes first, is held, and follows the audience once the door gives up on the dead one.
        const afterKill = await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=8000', body());
        assert.equal(afterKill.body.status, 'completed', JSON.stringify(afterKill.body));
        assert.equal(afterKill.body.quotes_received, 1, 'the near maker quoted');
        for (const policy of quoting) policy.stop();
        await near.close();
        await waitForQuiet(fixture.nc);
        assert.equal(await bucket(A, userAccount(taker.userId), 'at_risk'), 4_000_000n, 'two fills of 2');
      } finally {
        await doomed.kill();
      }
    });
  },
);

test('gateways and shard nodes take the partition map from the coordinator, and refuse to start with another', { skip }, async () => {
  await withGateways(async (coordinator, [one]) => {
    // The nodes and gateway one were given no map: gateway one routes a create of node b's user to node b's
    // owner by the coordinator's map, and node b holds that owner (by any other map, node a's door would
    // refuse it 503: shard-door.ts MISROUTED, or no node would answer).
    const onB = await userOn(one, B);
    await credit(one, onB.address, 10_000_000);
    assert.equal(await MAP_TAKEN.bucket(B, userAccount(onB.userId), 'available'), 10_000_000n, "node b's owner holds it");
    const market = (await createMarket(one)).market_id;
    const created = await client(one.baseUrl, onB.token).post<RfqResult>(
      '/v1/rfq/unsigned?wait_ms=2000',
      unsignedBody([{ market_id: market, direction: 'up' }]),
    );
    assert.deepEqual([created.status, created.body.status], [201, 'timeout'], 'no maker: its audience empty at once');
    const same = await startEdge(coordinator, 'gateway-same-map', '0-63;64-127;128-255');
    assert.equal(await same.stop(), 0, 'the same map, given: accepted');
    const mismatch = /PARLAYD_PARTITION_MAP 0-255 is not the coordinator's \(0-63;64-127;128-255\): leave it unset/;
    await assert.rejects(startEdge(coordinator, 'gateway-other-map', '0-255'), (err: Error) => {
      assert.match(err.message, /exited with 2 before listening/);
      assert.match(err.message, mismatch);
      return true;
    });
    // A shard node given another map stops before any owner of it starts (its owner 0 would answer node a's
    // calls): its partitions are node a's and node b's, so the ledger check after this test shows it took none.
    const refused = await startShardNode({ PARLAYD_PARTITIONS: '0-255', PARLAYD_PARTITION_MAP: '0-255' });
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr.trim().split('\n').length, 1, `one line: ${refused.stderr}`);
    assert.match(refused.stderr, mismatch);
  }, MAP_TAKEN);
});

test("the dashboard's socket on a gateway shows the cluster: every front process's figures added up", { skip }, async () => {
  await withGateways(async (coordinator, [one, two]) => {
    const taker = await userOn(one, A);
    await credit(one, taker.address, 10_000_000);
    const maker = await registerMaker(one, makerWalletOn(B), 'maker on b', 50_000_000);
    const market = (await createMarket(one)).market_id;
    const connected = await connectMaker(two, maker);
    const quoting = autoQuote(connected, { odds: 2.5 });
    const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
    // One RFQ created on each front process, each filled by the maker on gateway two.
    for (const front of [one, two, coordinator]) {
      const created = await client(front.baseUrl, taker.token).post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body());
      assert.equal(created.body.status, 'completed', JSON.stringify(created.body));
    }
    const createdOn = async (front: TestServer) =>
      metricSum((await client(front.baseUrl, front.adminToken).get('/metrics')).body as string, 'parlayd_rfq_created_total');
    assert.deepEqual(await Promise.all([one, two, coordinator].map(createdOn)), [1, 1, 1], 'each process counts its own');
    for (const viewed of [one, coordinator]) {
      const feed = await openFeed(viewed, viewed.adminToken);
      try {
        const { frame } = (await feed.next(
          (m) => m['type'] === 'frame' && (m['frame'] as Frame).processes === 3 && (m['frame'] as Frame).rfqTotals.created === 3,
          15_000,
        )) as { frame: Frame };
        assert.equal(frame.rfqTotals.ended, 3);
        assert.equal(frame.makersConnected, 1, "gateway two's maker");
        assert.deepEqual(
          frame.makers.map((row) => [row.maker, row.name, row.connections, row.quotes, row.fills]),
          [[maker.address.toLowerCase(), 'maker on b', 1, 3, 3]],
        );
      } finally {
        feed.close();
      }
    }
    quoting.stop();
    await resolveMarket(one, market, 'NO');
  });
});

/** A shard node on this file's nats-server with `env`, run until it exits (it is expected to refuse). */
async function startShardNode(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-refused-node-'));
  try {
    const child = spawn(process.execPath, [SHARD_NODE], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PARLAYD_NATS_URL: fixture.server.url, PARLAYD_DATA_DIR: dataDir, ...env },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stderr };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
