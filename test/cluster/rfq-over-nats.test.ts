// The RFQ path across processes: a gateway (the service with PARLAYD_NATS_URL set: its HTTP, maker socket
// and admission, src/cluster/gateway.ts) whose RFQ shards run on two shard nodes (src/cluster/shard-node-main.ts:
// node a owners 0 and 64, node b owner 128), on a real nats-server. A taker filled by a maker whose account
// lives on the other node, exact to the micro on both sides once the market resolves, read through the
// gateway's views; a node killed (refused 503 within a second for its users, the other node's served, what it
// answered there once back); a market resolved while a node is down; a thin maker raced from both nodes;
// nats-server restarted; two gateways, one killed; the protection read across; a gateway with a stale map;
// a gateway killed with RFQs in flight. After each test every owner is quiet, the cluster's ledger check
// through NATS is clean, the gateway's own check at its stop too, and the owners' journals check together.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkCluster } from '../../src/cluster/ledger-check.js';
import { partitionOfUser } from '../../src/cluster/partitions.js';
import type { LedgerCheck } from '../../src/ledger/check.js';
import type { RfqResult } from '../../src/contract/rfq.js';
import { creditRef, makerAccount, userAccount } from '../../src/records/ledger.js';
import { fillOrder } from '../../src/rfq/maker-fills-view.js';
import { assertApiError } from '../helpers/errors.js';
import { admin, client } from '../helpers/http.js';
import { connectMaker, registerMaker } from '../helpers/makers.js';
import { createMarket, resolveMarket } from '../helpers/markets.js';
import { natsForFile } from '../helpers/nats-server.js';
import { gatewayCluster, makerWalletOn, userOn } from '../helpers/gateway-cluster.js';
import { A, B, MAP, waitForQuiet } from '../helpers/owner-nodes.js';
import { autoQuote, unsignedBody } from '../helpers/rfq.js';
import { restartServer } from '../helpers/server.js';
import { credit, type TestUser } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const fixture = natsForFile();
const { skip } = fixture;

/**
 * A quote window far longer than any answer waits here (wait_ms=3000): an RFQ completes in time only by
 * closing early, once every maker it was sent to has answered, which needs its audience from the gateway.
 */
const RFQ_SETTINGS = { PARLAYD_QUOTE_WINDOW_MS: '20000' };
const { startGateway, withCluster, bucket } = gatewayCluster(fixture, RFQ_SETTINGS);

test('a taker on one node filled by a maker on the other, through the gateway, exact to the micro once settled', { skip }, async () => {
  await withCluster(async ({ gateway }) => {
    const taker = await userOn(gateway, A);
    await credit(gateway, taker.address, 10_000_000);
    const maker = await registerMaker(gateway, makerWalletOn(B), 'maker on b', 50_000_000);
    const takerAccount = userAccount(taker.userId);
    const makerAcct = makerAccount(maker.address);
    await waitFor(
      async () => (await bucket(A, takerAccount, 'available')) === 10_000_000n && (await bucket(B, makerAcct, 'available')) === 50_000_000n,
      {
        what: 'the taker and the maker funded on their nodes',
      },
    );

    const market = (await createMarket(gateway)).market_id;
    const connected = await connectMaker(gateway, maker);
    const quoting = autoQuote(connected, { odds: 2.5 });
    const api = client(gateway.baseUrl, taker.token);
    const created = await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', unsignedBody([{ market_id: market, direction: 'up' }]));
    quoting.stop();
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.status, 'completed', JSON.stringify(created.body));
    assert.equal(created.body.filled_wager_micros, '2000000');
    assert.equal(created.body.payout_micros, '5000000');

    // The RFQ is read from its shard on node a, where it lives.
    const read = await api.get<RfqResult>(`/v1/rfq/${created.body.request_id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.status, 'completed');

    await waitForQuiet(fixture.nc);
    assert.equal(await bucket(A, takerAccount, 'available'), 8_000_000n);
    assert.equal(await bucket(A, takerAccount, 'at_risk'), 2_000_000n);
    assert.equal(await bucket(B, makerAcct, 'available'), 47_000_000n, "the maker's liability (5 - 2) locked on node b");
    assert.equal(await bucket(B, makerAcct, 'locked'), 3_000_000n);

    // The views of what the nodes own, read through the gateway at the node of each account, after its barrier.
    assert.deepEqual((await api.get('/v1/user/balance')).body, {
      available_micros: '8000000',
      reserved_micros: '0',
      at_risk_micros: '2000000',
      pending_withdrawal_micros: '0',
    });
    const rfqs = await api.get<{ rfqs: Array<{ request_id: string; status: string }> }>('/v1/user/rfqs');
    assert.deepEqual(
      rfqs.body.rfqs.map((rfq) => [rfq.request_id, rfq.status]),
      [[created.body.request_id, 'completed']],
    );
    const positions = await api.get<{ positions: Array<{ request_id: string }> }>('/v1/user/positions?status=open');
    assert.deepEqual(
      positions.body.positions.map((position) => position.request_id),
      [created.body.request_id],
    );
    const journal = await api.get<{ entries: unknown[] }>('/v1/user/journal');
    assert.equal(journal.status, 200);
    assert.ok(journal.body.entries.length >= 3, `credit, reservation and fill in the journal: ${JSON.stringify(journal.body)}`);
    const makerApi = client(gateway.baseUrl, connected.sessionToken);
    assert.deepEqual((await makerApi.get('/v1/mm/balance')).body, {
      available_micros: '47000000',
      locked_micros: '3000000',
      pending_withdrawal_micros: '0',
    });

    await resolveMarket(gateway, market, 'YES');
    await waitFor(async () => (await bucket(A, takerAccount, 'available')) === 13_000_000n, {
      what: 'the taker paid its stake back and the liability from node b',
    });
    assert.equal((await api.get<{ available_micros: string }>('/v1/user/balance')).body.available_micros, '13000000');
    assert.deepEqual((await api.get<{ positions: unknown[] }>('/v1/user/positions?status=open')).body.positions, []);
    await waitForQuiet(fixture.nc);
    assert.equal(await bucket(A, takerAccount, 'at_risk'), 0n);
    assert.equal(await bucket(B, makerAcct, 'locked'), 0n);
    assert.equal(await bucket(B, makerAcct, 'available'), 47_000_000n);
    await connected.close();
  });
});

test(
  "a shard node killed: its users' RFQs are refused 503 within a second, the other node's go on, and it serves once back",
  { skip },
  async () => {
    await withCluster(async ({ nodes, gateway }) => {
      const onA = await userOn(gateway, A);
      const onB = await userOn(gateway, B);
      await credit(gateway, onA.address, 10_000_000);
      await credit(gateway, onB.address, 10_000_000);
      const market = (await createMarket(gateway)).market_id;
      const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
      const apiA = client(gateway.baseUrl, onA.token);
      const apiB = client(gateway.baseUrl, onB.token);
      // No maker connected: each RFQ ends `timeout` at once (its audience is empty), its reservation released.
      assert.equal((await apiB.post<RfqResult>('/v1/rfq/unsigned?wait_ms=2000', body())).body.status, 'timeout');
      // One filled and answered just before the kill: what node b answered is durable there.
      const connected = await connectMaker(gateway, await registerMaker(gateway, makerWalletOn(A), 'maker on a', 50_000_000));
      const quoting = autoQuote(connected, { odds: 2 });
      const filled = await apiB.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body());
      assert.equal(filled.body.status, 'completed', JSON.stringify(filled.body));
      quoting.stop();
      await connected.close();

      await nodes[1].kill();
      const killedAtMs = Date.now();
      await waitFor(
        async () => {
          const refused = await apiB.post('/v1/rfq/unsigned', body());
          if (refused.status !== 503) return false;
          assertApiError(refused, 503, 'OVERLOADED');
          assert.equal(refused.headers.get('retry-after'), '1');
          return true;
        },
        { what: "node b's users refused", timeoutMs: 5_000, intervalMs: 50 },
      );
      assert.ok(Date.now() - killedAtMs < 1_500, `refused ${Date.now() - killedAtMs} ms after the kill`);
      assert.equal(
        (await apiA.post<RfqResult>('/v1/rfq/unsigned?wait_ms=2000', body())).body.status,
        'timeout',
        "node a's users are served meanwhile",
      );

      await nodes[1].start();
      await waitFor(async () => (await apiB.post('/v1/rfq/unsigned', body())).status === 201, {
        what: "node b's users served again",
        timeoutMs: 10_000,
      });
      assert.equal((await apiB.get<RfqResult>(`/v1/rfq/${filled.body.request_id}`)).body.status, 'completed', 'the fill survived the kill');
      const balance = await apiB.get<{ available_micros: string; at_risk_micros: string }>('/v1/user/balance');
      assert.deepEqual([balance.body.available_micros, balance.body.at_risk_micros], ['8000000', '2000000']);
    });
  },
);

test('a market resolved while the taker’s shard node is down: its positions settle once the node is back', { skip }, async () => {
  await withCluster(async ({ nodes, gateway }) => {
    const taker = await userOn(gateway, B);
    await credit(gateway, taker.address, 10_000_000);
    const maker = await registerMaker(gateway, makerWalletOn(A), 'maker on a', 50_000_000);
    const takerAccount = userAccount(taker.userId);
    await waitFor(async () => (await bucket(B, takerAccount, 'available')) === 10_000_000n, { what: 'the taker funded on node b' });
    const market = (await createMarket(gateway)).market_id;
    const connected = await connectMaker(gateway, maker);
    const quoting = autoQuote(connected, { odds: 2 });
    const api = client(gateway.baseUrl, taker.token);
    const created = await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', unsignedBody([{ market_id: market, direction: 'up' }]));
    quoting.stop();
    assert.equal(created.body.status, 'completed', JSON.stringify(created.body));
    await waitForQuiet(fixture.nc);
    assert.equal(await bucket(B, takerAccount, 'at_risk'), 2_000_000n);

    await nodes[1].kill();
    await resolveMarket(gateway, market, 'YES'); // the gateway answers: the resolution is its, the settlement node b's
    await nodes[1].start();
    // The gateway joins node b again (a new incarnation) and sends it every market: the resolved one settles there.
    await waitFor(async () => (await bucket(B, takerAccount, 'available')) === 8_000_000n + 4_000_000n, {
      what: "the taker paid on node b once it is back, the maker's liability from node a",
      timeoutMs: 10_000,
    });
    await waitForQuiet(fixture.nc);
    assert.equal(await bucket(B, takerAccount, 'at_risk'), 0n);
    assert.equal(await bucket(A, makerAccount(maker.address), 'locked'), 0n);
    assert.equal(await bucket(A, makerAccount(maker.address), 'available'), 48_000_000n);
    await connected.close();
  });
});

test('a maker on node b funded for N fills, raced by 2N RFQs of users on both nodes, fills exactly N', { skip }, async () => {
  await withCluster(async ({ gateway }) => {
    const N = 4;
    const liabilityMicros = 2_000_000; // a 2,000,000 wager at odds 2
    const maker = await registerMaker(gateway, makerWalletOn(B), 'thin maker', N * liabilityMicros);
    const takers: TestUser[] = [];
    for (let i = 0; i < 2 * N; i++) takers.push(await userOn(gateway, i % 2 === 0 ? A : B));
    await Promise.all(takers.map((taker) => credit(gateway, taker.address, 2_000_000)));
    await waitFor(
      async () => {
        for (const taker of takers)
          if ((await bucket(MAP.ownerOf(userAccount(taker.userId)), userAccount(taker.userId), 'available')) !== 2_000_000n) return false;
        return (await bucket(B, makerAccount(maker.address), 'available')) === BigInt(N * liabilityMicros);
      },
      { what: 'every taker and the maker funded' },
    );
    const market = (await createMarket(gateway)).market_id;
    const connected = await connectMaker(gateway, maker);
    const quoting = autoQuote(connected, { odds: 2 });
    const results = await Promise.all(
      takers.map((taker) =>
        client(gateway.baseUrl, taker.token).post<RfqResult>(
          '/v1/rfq/unsigned?wait_ms=5000',
          unsignedBody([{ market_id: market, direction: 'up' }]),
        ),
      ),
    );
    quoting.stop();
    const statuses = results.map((result) => `${result.body.status} ${result.body.error ?? ''}`.trim());
    assert.equal(statuses.filter((status) => status === 'completed').length, N, statuses.join(', '));
    // The others: their quote taken and its fill refused (the collateral gone meanwhile), or their quote refused
    // INSUFFICIENT_COLLATERAL on arrival, when the maker's account is on their node and already spent.
    for (const status of statuses) assert.ok(['completed', 'failed INSUFFICIENT_LIQUIDITY', 'timeout'].includes(status), status);
    await waitForQuiet(fixture.nc);
    assert.equal(await bucket(B, makerAccount(maker.address), 'locked'), BigInt(N * liabilityMicros));
    assert.equal(await bucket(B, makerAccount(maker.address), 'available'), 0n);

    // The maker's fills are written by each taker's node: listed through the gateway from both, merged
    // newest first, a page of one at a time, each once.
    const completed = results.filter((result) => result.body.status === 'completed').map((result) => result.body.request_id);
    const makerApi = client(gateway.baseUrl, connected.sessionToken);
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await makerApi.get<{ fills: Array<{ request_id: string }>; next_cursor: string | null }>(`/v1/mm/fills?limit=1${query}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      listed.push(...page.body.fills.map((fill) => fill.request_id));
      cursor = page.body.next_cursor;
    } while (cursor !== null && listed.length <= 2 * N);
    assert.deepEqual([...listed].sort(), [...completed].sort(), 'every fill once');
    assert.deepEqual(
      listed,
      [...listed].sort((a, b) => (fillOrder(b) > fillOrder(a) ? 1 : -1)),
      'newest first',
    );
    const filledTakers = results.flatMap((result, i) => (result.body.status === 'completed' ? [takers[i]!.userId] : []));
    const nodesOf = new Set(filledTakers.map((userId) => MAP.ownerOfPartition(partitionOfUser(userId))));
    const pnl = await makerApi.get<{ takers: unknown[] }>('/v1/mm/taker_pnl');
    assert.equal(pnl.status, 200, JSON.stringify(pnl.body));
    assert.equal(pnl.body.takers.length, N, `one row per taker filled, from the nodes ${[...nodesOf].join(', ')}`);
    await connected.close();
  });
});

test('nats-server restarted: calls end 503 while it is down, never hang, and RFQs complete again once it is back', { skip }, async () => {
  await withCluster(async ({ gateway }) => {
    const taker = await userOn(gateway, A);
    await credit(gateway, taker.address, 100_000_000);
    const maker = await registerMaker(gateway, makerWalletOn(B), 'maker on b', 500_000_000);
    const market = (await createMarket(gateway)).market_id;
    const connected = await connectMaker(gateway, maker);
    const quoting = autoQuote(connected, { odds: 2 });
    const api = client(gateway.baseUrl, taker.token);
    const rfq = () => api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', unsignedBody([{ market_id: market, direction: 'up' }]));
    assert.equal((await rfq()).body.status, 'completed');

    await fixture.server.kill();
    const during = await rfq();
    assert.ok(
      during.status === 503 || during.body.status === 'completed',
      `while NATS is down: ${during.status} ${JSON.stringify(during.body)}`,
    );
    await fixture.server.restart();
    await waitFor(async () => (await rfq()).body.status === 'completed', { what: 'an RFQ completed after the restart', timeoutMs: 15_000 });
    quoting.stop();
    await connected.close();
  });
});

test('two gateways: a taker on one filled by a maker on the other; a gateway killed stops being waited for', { skip }, async () => {
  await withCluster(async ({ gateway }) => {
    // A second gateway on the same shard nodes. Until the coordinator holds users, makers and markets, each
    // gateway keeps its own: the maker is registered on the second, the market and the taker are the first's.
    const second = await startGateway(join(gateway.dataDir, '..', 'gateway-b'), 'gateway-b');
    try {
      const taker = await userOn(gateway, A);
      await credit(gateway, taker.address, 10_000_000);
      const maker = await registerMaker(second, makerWalletOn(B), 'maker on the second gateway', 50_000_000);
      const market = (await createMarket(gateway)).market_id;
      const connected = await connectMaker(second, maker);
      const quoting = autoQuote(connected, { odds: 2 });
      const api = client(gateway.baseUrl, taker.token);
      const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
      // Completes in time only if the RFQ reached the second gateway's maker and both gateways' audiences merged.
      const filled = await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body());
      assert.equal(filled.body.status, 'completed', JSON.stringify(filled.body));
      await waitFor(() => connected.socket.received.some((m) => m.type === 'rfq_result' && m.request_id === filled.body.request_id), {
        what: 'the fill told to the maker on the second gateway',
      });
      quoting.stop();
      await waitForQuiet(fixture.nc);
      assert.equal(await bucket(A, userAccount(taker.userId), 'at_risk'), 2_000_000n);
      assert.equal(await bucket(B, makerAccount(maker.address), 'locked'), 2_000_000n);

      await second.kill();
      // Sent to both gateways; the killed one never answers with its audience. Once it has been silent a
      // while the shard stops waiting for it, and the RFQ closes on the first gateway's audience (no makers)
      // long before its 20 s window.
      const after = await api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=8000', body());
      assert.equal(after.body.status, 'timeout', JSON.stringify(after.body));
    } finally {
      await second.kill();
    }
  });
});

test(
  "a maker's protection by max_locked_micros reads its locked collateral on its node: the fill that reaches it trips",
  { skip },
  async () => {
    await withCluster(async ({ gateway }) => {
      const taker = await userOn(gateway, A);
      await credit(gateway, taker.address, 10_000_000);
      const maker = await registerMaker(gateway, makerWalletOn(B), 'protected maker', 50_000_000);
      const market = (await createMarket(gateway)).market_id;
      const connected = await connectMaker(gateway, maker);
      const makerApi = client(gateway.baseUrl, connected.sessionToken);
      // A 2 USDC wager at odds 1.8 locks 1.6 USDC: the first fill stays under 2 USDC, the second reaches it.
      const limits = { window_ms: null, max_fills: null, max_filled_wager_micros: null, max_locked_micros: '2000000' };
      assert.equal((await makerApi.put('/v1/mm/protection', limits)).status, 200);
      const quoting = autoQuote(connected, { odds: 1.8 });
      const api = client(gateway.baseUrl, taker.token);
      const rfq = () => api.post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', unsignedBody([{ market_id: market, direction: 'up' }]));
      assert.equal((await rfq()).body.status, 'completed');
      assert.equal((await makerApi.get<{ locked_micros: string }>('/v1/mm/balance')).body.locked_micros, '1600000');
      assert.equal((await makerApi.get<{ tripped: unknown }>('/v1/mm/protection')).body.tripped, null, 'under the limit');
      assert.equal((await rfq()).body.status, 'completed');
      await waitFor(() => connected.socket.received.some((m) => m.type === 'protection_tripped' && m.reason === 'MAX_LOCKED'), {
        what: 'the protection tripped by the locked collateral read on node b',
      });
      quoting.stop();
      await connected.close();
    });
  },
);

test(
  "a gateway with a stale partition map: calls for another owner's accounts are refused 503, and the node goes on",
  { skip },
  async () => {
    await withCluster(async ({ gateway }) => {
      // Its map says one owner holds every partition: it sends everything to owner 0, which holds 0-63 only.
      const stale = await startGateway(join(gateway.dataDir, '..', 'gateway-stale'), 'gateway-stale', '0-255');
      try {
        const own = await userOn(stale, A);
        const other = await userOn(stale, B);
        // Credits under keys owner 0 decides: what a stale map still routes right.
        const keyOnA = () => {
          for (;;) {
            const key = randomUUID();
            if (MAP.ownerOf(creditRef(key)) === A) return key;
          }
        };
        await credit(stale, own.address, 10_000_000, keyOnA());
        // Decided by owner 0 (the key's), the money on its way to node b, whose owner the stale map lacks: the
        // answer cannot wait for it there, and stands (the credit is decided).
        await credit(stale, other.address, 10_000_000, keyOnA());
        await waitFor(async () => (await bucket(B, userAccount(other.userId), 'available')) === 10_000_000n, {
          what: 'the credit on node b',
        });
        const market = (await createMarket(stale)).market_id;
        const body = () => unsignedBody([{ market_id: market, direction: 'up' }]);
        const refused = await client(stale.baseUrl, other.token).post('/v1/rfq/unsigned', body());
        assertApiError(refused, 503, 'OVERLOADED');
        // Owner 0 decided nothing for it and goes on: its own users' RFQs are served.
        const served = await client(stale.baseUrl, own.token).post<RfqResult>('/v1/rfq/unsigned?wait_ms=3000', body());
        assert.equal(served.body.status, 'timeout', JSON.stringify(served.body));
        assert.equal(await bucket(B, userAccount(other.userId), 'reserved'), 0n, 'nothing decided for it');
      } finally {
        await stale.kill();
      }
    });
  },
);

test(
  'the gateway killed with RFQs in flight: they end on their nodes as they would, nothing held, and a restarted gateway reads them',
  { skip },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'parlayd-rfq-nats-gateway-'));
    try {
      await withCluster(async () => {
        // A gateway of its own, to kill and start again on its data directory.
        const gateway = await startGateway(join(root, 'gateway-k'), 'gateway-k');
        const taker = await userOn(gateway, A);
        await credit(gateway, taker.address, 100_000_000);
        const market = (await createMarket(gateway)).market_id;
        // A maker that quotes with a last look it never answers: each RFQ waits in its last look when the gateway dies.
        const connected = await connectMaker(gateway, await registerMaker(gateway, makerWalletOn(B), 'silent last look', 500_000_000));
        const quoting = autoQuote(connected, { odds: 2, isLastLook: true });
        const api = client(gateway.baseUrl, taker.token);
        const made = await Promise.all(
          Array.from({ length: 5 }, () => api.post<RfqResult>('/v1/rfq/unsigned', unsignedBody([{ market_id: market, direction: 'up' }]))),
        );
        assert.deepEqual(
          made.map((result) => result.status),
          [201, 201, 201, 201, 201],
        );
        // Every RFQ has reached a last look (a maker may be offered two on one RFQ: counted by RFQ), the later
        // ones still waiting in theirs when the gateway dies.
        const inLastLook = () => new Set(connected.socket.received.flatMap((m) => (m.type === 'last_look' ? [m.request_id] : [])));
        await waitFor(() => inLastLook().size === made.length, { what: 'every RFQ in its last look', timeoutMs: 10_000 });
        quoting.stop();
        await gateway.kill();
        // The node ends them without it: each last look runs out at its deadline and its RFQ fails, as it would.
        const takerAccount = userAccount(taker.userId);
        await waitFor(async () => (await bucket(A, takerAccount, 'reserved')) === 0n, {
          what: 'every reservation released',
          timeoutMs: 10_000,
        });
        assert.equal(await bucket(A, takerAccount, 'available'), 100_000_000n);
        const again = await restartServer(gateway);
        try {
          const api2 = client(again.baseUrl, taker.token);
          for (const { body } of made) {
            const read = await api2.get<RfqResult>(`/v1/rfq/${body.request_id}`);
            assert.equal(read.status, 200);
            assert.ok(['failed', 'timeout'].includes(read.body.status), `${body.request_id}: ${read.body.status}`);
          }
        } finally {
          assert.equal(await again.stop(), 0);
        }
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  "withdrawals through the gateway: decided and kept by each account's node, replayed, listed, ended once, and the ledger check over every node",
  { skip },
  async () => {
    await withCluster(async ({ nodes, gateway }) => {
      const operator = admin(gateway);
      const onA = await userOn(gateway, A);
      const onB = await userOn(gateway, B);
      await credit(gateway, onA.address, 10_000_000);
      await credit(gateway, onB.address, 10_000_000);
      const connected = await connectMaker(gateway, await registerMaker(gateway, makerWalletOn(B), 'maker on b', 20_000_000));
      const apiA = client(gateway.baseUrl, onA.token);
      const apiB = client(gateway.baseUrl, onB.token);
      const makerApi = client(gateway.baseUrl, connected.sessionToken);
      const ask = (api: typeof apiA, path: string, amountMicros: number, key: string) =>
        api.post<WithdrawalBody>(path, { amount_micros: String(amountMicros), destination: DESTINATION, idempotency_key: key });

      const ofA = await ask(apiA, '/v1/user/withdrawals', 3_000_000, 'a-1');
      assert.equal(ofA.status, 201, JSON.stringify(ofA.body));
      // The key's record is on node a: a replay finds it there, a different request under it is refused.
      const replayed = await ask(apiA, '/v1/user/withdrawals', 3_000_000, 'a-1');
      assert.deepEqual([replayed.status, replayed.body], [200, ofA.body]);
      assertApiError(await ask(apiA, '/v1/user/withdrawals', 4_000_000, 'a-1'), 409, 'IDEMPOTENCY_CONFLICT');
      const ofB = await ask(apiB, '/v1/user/withdrawals', 4_000_000, 'b-1');
      assert.equal(ofB.status, 201, JSON.stringify(ofB.body));
      const ofMaker = await ask(makerApi, '/v1/mm/withdrawals', 5_000_000, 'm-1');
      assert.equal(ofMaker.status, 201, JSON.stringify(ofMaker.body));
      assert.deepEqual((await ask(makerApi, '/v1/mm/withdrawals', 5_000_000, 'm-1')).body, ofMaker.body);
      assertApiError(await ask(apiB, '/v1/user/withdrawals', 7_000_000, 'b-2'), 422, 'INSUFFICIENT_BALANCE');

      assert.equal(await bucket(A, userAccount(onA.userId), 'pending_withdrawal'), 3_000_000n);
      assert.equal(await bucket(B, makerAccount(connected.address), 'pending_withdrawal'), 5_000_000n);
      const balanceA = await apiA.get<{ available_micros: string; pending_withdrawal_micros: string }>('/v1/user/balance');
      assert.deepEqual([balanceA.body.available_micros, balanceA.body.pending_withdrawal_micros], ['7000000', '3000000']);
      const ownA = await apiA.get<{ withdrawals: WithdrawalBody[] }>('/v1/user/withdrawals');
      assert.deepEqual(ownA.body.withdrawals, [ofA.body]);
      const ownMaker = await makerApi.get<{ withdrawals: WithdrawalBody[] }>('/v1/mm/withdrawals');
      assert.deepEqual(ownMaker.body.withdrawals, [ofMaker.body]);

      // The operator's queue spans both nodes: a page of one at a time, oldest first, each once.
      const queue = await walkQueue(operator, 'pending');
      assert.deepEqual(
        queue,
        [ofA.body, ofB.body, ofMaker.body].map((w) => w.withdrawal_id),
      );

      const end = (id: string, how: 'complete' | 'fail') => operator.post<WithdrawalBody>(`/v1/admin/withdrawals/${id}/${how}`, {});
      const completed = await end(ofA.body.withdrawal_id, 'complete');
      assert.equal(completed.status, 200, JSON.stringify(completed.body));
      assert.equal(completed.body.status, 'completed');
      assert.deepEqual((await end(ofA.body.withdrawal_id, 'complete')).body, completed.body, 'the same end again: unchanged');
      assertApiError(await end(ofA.body.withdrawal_id, 'fail'), 409, 'WITHDRAWAL_FINAL');
      assert.equal((await end(ofB.body.withdrawal_id, 'fail')).body.status, 'failed');
      assert.equal((await end(ofMaker.body.withdrawal_id, 'complete')).body.status, 'completed');
      // An id of no owner of the map, of an owner that never made it, and one that is not an id.
      const another = ofB.body.withdrawal_id.slice(0, -1) + (ofB.body.withdrawal_id.endsWith('0') ? '1' : '0');
      for (const unknown of ['w_0000000000000000ff0000000000', another, 'nonsense']) {
        assertApiError(await end(unknown, 'complete'), 404, 'WITHDRAWAL_NOT_FOUND');
      }
      assert.deepEqual(await walkQueue(operator, 'pending'), []);
      assert.deepEqual(await walkQueue(operator, 'completed'), [ofA.body.withdrawal_id, ofMaker.body.withdrawal_id]);

      await waitForQuiet(fixture.nc);
      assert.equal(await bucket(A, userAccount(onA.userId), 'pending_withdrawal'), 0n);
      assert.equal(await bucket(B, userAccount(onB.userId), 'available'), 10_000_000n, 'the failed one came back');
      assert.equal(await bucket(B, makerAccount(connected.address), 'available'), 15_000_000n);

      // The admin's ledger check through the gateway is every node's: what came in less what left.
      const check = await operator.get<LedgerCheck>('/v1/admin/ledger/check');
      assert.equal(check.status, 200, JSON.stringify(check.body));
      assert.equal(check.body.ok, true, JSON.stringify(check.body.differences));
      assert.deepEqual(
        [check.body.credited_micros, check.body.withdrawn_micros, check.body.total_micros],
        ['40000000', '8000000', '32000000'],
      );
      const overNats = await checkCluster(fixture.nc, MAP.owners, 2_000);
      assert.equal(
        check.body.accounts,
        overNats.owners.reduce((sum, part) => sum + part.check.accounts, 0),
      );
      // A node that cannot answer: its part cannot be guessed.
      await nodes[1].kill();
      const refused = await operator.get('/v1/admin/ledger/check');
      assertApiError(refused, 503, 'OVERLOADED');
      assert.equal(refused.headers.get('retry-after'), '1');
      await nodes[1].start();
      await waitFor(async () => (await operator.get<LedgerCheck>('/v1/admin/ledger/check')).body.ok === true, {
        what: 'the check whole again once node b is back',
        timeoutMs: 10_000,
      });
      await connected.close();
    });
  },
);

interface WithdrawalBody {
  withdrawal_id: string;
  status: string;
}

const DESTINATION = `0x${'5a'.repeat(20)}`;

/** The operator's queue of one status, walked a page of one at a time: its ids in order. */
async function walkQueue(operator: ReturnType<typeof admin>, status: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = await operator.get<{ withdrawals: WithdrawalBody[]; next_cursor: string | null }>(
      `/v1/admin/withdrawals?status=${status}&limit=1${query}`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    ids.push(...page.body.withdrawals.map((w) => w.withdrawal_id));
    cursor = page.body.next_cursor;
  } while (cursor !== null && ids.length < 10);
  return ids;
}
